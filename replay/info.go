package replay

import (
	"errors"
	"io"
	"slices"

	"github.com/lockhost/lockhost/lockstep"
)

// Info summarises a segment.
type Info struct {
	Header Header
	// Bytes is the file's size; StartBytes the start save's.
	Bytes, StartBytes int64
	// FirstTick is the tick the start save brings the session to; LastTick
	// the last the recording reaches (the end frame's, or the last commands
	// frame's when the segment was cut short).
	FirstTick, LastTick uint64
	// Commands counts the commands; CommandBytes their frames' bytes.
	Commands     int
	CommandBytes int64
	// Players are the IDs of the players whose commands it holds.
	Players []int32
	// Checkpoints counts the checkpoint frames.
	Checkpoints int
	// Complete: the segment has its end frame; Rotated: it ends where the
	// host began the next segment. Cut says where an incomplete one ends.
	Complete, Rotated bool
	Cut               string
}

// Summarise reads a whole segment and summarises it.
func Summarise(path string) (Info, error) {
	r, err := Open(path)
	if err != nil {
		return Info{}, err
	}
	defer r.Close()
	return summarise(r, nil)
}

// summarise reads the rest of r and summarises it; with cps it also
// keeps each checkpoint by its tick.
func summarise(r *Reader, cps map[uint64]lockstep.Checkpoint) (Info, error) {
	in := Info{Header: r.Header(), Bytes: r.Size(), StartBytes: r.StartSize(), FirstTick: r.Header().StartTick}
	in.LastTick = in.FirstTick
	players := map[int32]bool{}
	for {
		fr, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return in, err
		}
		switch fr.Kind {
		case KindCommands:
			in.Commands += len(fr.Commands.Commands)
			in.LastTick = max(in.LastTick, fr.Commands.To)
			for _, c := range fr.Commands.Commands {
				players[c.Player] = true
			}
		case KindCheckpoint:
			in.Checkpoints++
			if cps != nil {
				cps[fr.Checkpoint.Tick] = *fr.Checkpoint
			}
			in.LastTick = max(in.LastTick, fr.Checkpoint.Tick)
		case KindEnd:
			in.LastTick = max(in.LastTick, fr.EndTick)
			in.Rotated = fr.EndWhy == EndRotated
		}
	}
	in.Complete, in.Cut = r.Complete(), r.Cut()
	for id := range players {
		in.Players = append(in.Players, id)
	}
	slices.Sort(in.Players)
	in.CommandBytes = in.Bytes - in.StartBytes
	return in, nil
}
