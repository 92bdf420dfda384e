package host

import (
	"slices"
	"sync/atomic"
	"time"

	"github.com/lockhost/lockhost/lockstep"
	"github.com/lockhost/lockhost/snapshot"
	"github.com/lockhost/lockhost/wire"
)

// A held-world rejoin's replay (heldrejoin.go) grows with the commands
// it covers: laying it out and compressing it takes a while for minutes
// of a busy session's commands. The session goroutine therefore only
// checks its size (wire.ReplaySize, no layout) and copies the commands;
// a goroutine of the build's own lays them out and compresses them, and
// hands the replay back as a call on the session's queue. The admission
// waits meanwhile: the session keeps its request and admits it again
// once the replay is there.
//
// A replay is kept for the next rejoin from the same position (a player
// that drops again, or several that dropped together), and so is a
// refusal. A kept replay ends where the host stood when it was built;
// a rejoin that takes it is sent, after its admission's packets, the
// Server_Tick packets of the commands stamped since, then a grant of the
// host's tick (docs/protocol.md, section 6.6), as long as those are few
// enough; else the replay is built again.

// Bounds of the replays kept and built.
const (
	maxReplayBuilds    = 1                         // replays built at once: a build takes a core while it runs, and the ticks need one
	replayCacheEntries = 16                        // replays kept
	replayCacheBytes   = 4 * wire.MaxReplayBytes   // their compressed bytes
	replayTailCommands = lockstep.MaxBatchCommands // commands since a kept replay that a rejoin taking it is sent as ticks
)

// replayPos is a position in the commands the host stamped: a tick, and
// how many commands stamped at it come before.
type replayPos struct {
	tick    uint64
	applied uint32
}

// replayKey names the replays of one position: the commands stamped
// after it, in one codec.
type replayKey struct {
	from  replayPos
	codec snapshot.Codec
}

// replay is a built replay: the commands stamped after key's position up
// to upTo, laid out and compressed, or why there is none.
type replay struct {
	key    replayKey
	upTo   replayPos
	result wire.RejoinResult // wire.RejoinHeld, or why not
	blob   snapshot.Blob     // with wire.RejoinHeld
	used   uint64            // replays.uses when last taken
}

// replayBuild is a replay being built, and the join requests waiting for
// it.
type replayBuild struct {
	key     replayKey
	waiting []joinReq
}

// replays is the replays kept and being built. The session goroutine
// owns it, except layouts.
type replays struct {
	layouts atomic.Int64      // replays laid out, on any goroutine
	spawn   func(work func()) // starts work on a goroutine of its own

	kept     map[replayKey]*replay
	bytes    int    // compressed bytes of kept
	uses     uint64 // replays taken or kept so far
	building map[replayKey]*replayBuild
	backlog  []joinReq // waiting for a build to start: maxReplayBuilds were under way
}

func newReplays() *replays {
	return &replays{spawn: func(work func()) { go work() }, kept: map[replayKey]*replay{}, building: map[replayKey]*replayBuild{}}
}

// keep keeps r, letting go of the replays taken longest ago past the
// bounds.
func (rp *replays) keep(r *replay) {
	rp.forget(r.key)
	rp.uses++
	r.used = rp.uses
	rp.kept[r.key] = r
	rp.bytes += len(r.blob.Data)
	for len(rp.kept) > replayCacheEntries || rp.bytes > replayCacheBytes {
		var oldest *replay
		for _, k := range rp.kept {
			if oldest == nil || k.used < oldest.used {
				oldest = k
			}
		}
		rp.forget(oldest.key)
	}
}

// forget lets go of the replay kept for key.
func (rp *replays) forget(key replayKey) {
	if r := rp.kept[key]; r != nil {
		rp.bytes -= len(r.blob.Data)
		delete(rp.kept, key)
	}
}

// sweep lets go of the replays from a position before tick, which the
// rejoin window no longer serves.
func (rp *replays) sweep(tick uint64) {
	for key := range rp.kept {
		if key.from.tick < tick {
			rp.forget(key)
		}
	}
}

// park keeps r until the replay of key is built, or until a build can
// start.
func (rp *replays) park(key replayKey, r joinReq) {
	if b := rp.building[key]; b != nil {
		b.waiting = append(b.waiting, r)
		return
	}
	rp.backlog = append(rp.backlog, r)
}

// build lays cmds out as a replay and compresses it, off the session
// goroutine.
func (rp *replays) build(key replayKey, cmds []lockstep.Command, speed uint8, comp snapshot.Compression, limit int) *replay {
	r := &replay{key: key, result: wire.RejoinTooLarge}
	rp.layouts.Add(1)
	raw, ok := replayRaw(cmds, speed, limit)
	if !ok {
		return r
	}
	blob, err := snapshot.Compress(raw, comp)
	if err != nil || len(blob.Data) > wire.MaxReplayBytes {
		return r
	}
	r.result, r.blob = wire.RejoinHeld, blob
	return r
}

// replayLimit is the most bytes a replay's layout may take: the
// protocol's bound, and half the send queue's (a client reads it at
// that pace anyway).
func (s *session) replayLimit() int {
	return min(wire.MaxReplayRaw, int(s.cfg.Limits.SendQueueBytes/2))
}

// heldReplay answers a held-world rejoin from position from, in codec,
// whose commands since are cmds (the rejoin window's): a replay kept, a
// refusal, or, wait, a replay to wait for.
func (s *session) heldReplay(from replayPos, codec snapshot.Codec, cmds []lockstep.Command) (d heldDecision, wait bool) {
	key := replayKey{from: from, codec: codec}
	d.key = key
	if r := s.replays.kept[key]; r != nil {
		if r.result != wire.RejoinHeld {
			d.result = r.result
			return d, false
		}
		if tail, ok := s.replayTail(r); ok {
			s.replays.uses++
			r.used = s.replays.uses
			d.result, d.replay, d.granted, d.tail = wire.RejoinHeld, r.blob, r.upTo.tick, tail
			return d, false
		}
		s.replays.forget(key)
	}
	if _, busy := s.replays.building[key]; busy {
		return d, true
	}
	limit := s.replayLimit()
	if size, err := wire.ReplaySize(cmds); err != nil || size > limit {
		s.replays.keep(&replay{key: key, result: wire.RejoinTooLarge})
		d.result = wire.RejoinTooLarge
		return d, false
	}
	if len(s.replays.building) < maxReplayBuilds {
		s.startReplay(key, cmds, limit)
	}
	return d, true
}

// replayTail is the commands stamped after r's end, when the window
// still holds them and they are few enough to send as ticks: at most
// replayTailCommands, in ticks that fill at most a quarter of the send
// queue, in packets and in bytes.
func (s *session) replayTail(r *replay) ([]lockstep.Command, bool) {
	tail, ok := s.window.since(r.upTo.tick, r.upTo.applied)
	if !ok || len(tail) > replayTailCommands {
		return nil, false
	}
	bytes, ticks := int64(0), 1 // the pure grant after them
	for i, c := range tail {
		bytes += commandCost + int64(len(c.Payload))
		if i == 0 || c.Tick != tail[i-1].Tick {
			ticks++
		}
	}
	return tail, bytes <= s.cfg.Limits.SendQueueBytes/4 && ticks <= s.cfg.Limits.SendQueue/4
}

// startReplay builds the replay of key from cmds, a copy of which goes
// to a goroutine of its own; the replay comes back on the session's
// queue (replayBuilt).
func (s *session) startReplay(key replayKey, cmds []lockstep.Command, limit int) {
	b := &replayBuild{key: key}
	s.replays.building[key] = b
	upTo := replayPos{tick: s.auth.Sim().Tick(), applied: s.auth.Applied()}
	cmds = slices.Clone(cmds) // the window moves its commands as it goes; payloads are never written
	speed, comp := s.auth.Speed(), s.points.compression(key.codec)
	rp := s.replays
	rp.spawn(func() {
		start := time.Now()
		r := rp.build(key, cmds, speed, comp, limit)
		r.upTo = upTo
		took := time.Since(start)
		select {
		case s.calls <- func() { s.replayBuilt(b, r, len(cmds), took) }:
		case <-s.stopping:
		}
	})
}

// replayBuilt keeps the replay b built and admits again the join
// requests that waited for it, and those that waited for a build to
// start.
func (s *session) replayBuilt(b *replayBuild, r *replay, cmds int, took time.Duration) {
	delete(s.replays.building, b.key)
	s.replays.keep(r)
	s.cfg.Logger.Debug("held-world replay built", "tick", b.key.from.tick, "applied", b.key.from.applied, "up_to", r.upTo.tick,
		"commands", cmds, "bytes", len(r.blob.Data), "result", r.result.String(), "took", took, "waiting", len(b.waiting))
	waiting := append(b.waiting, s.replays.backlog...)
	s.replays.backlog = nil
	for _, jr := range waiting {
		s.join(jr)
	}
}
