package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/lockhost/lockhost/cmd/internal/cliutil"
	"github.com/lockhost/lockhost/cmd/internal/contentcli"
	"github.com/lockhost/lockhost/game/hostcontent"
	"github.com/lockhost/lockhost/host"
	"github.com/lockhost/lockhost/lockstep"
	"github.com/lockhost/lockhost/replay"
	"github.com/lockhost/lockhost/saves"
	"github.com/lockhost/lockhost/wire"
	"github.com/urfave/cli/v2"
)

// replayDirName is the folder, inside the host's data folder, that
// --record writes to.
const replayDirName = "replays"

// recordFlags are serve's options for recording the session.
func recordFlags() []cli.Flag {
	d := host.DefaultConfig().Record
	return []cli.Flag{
		&cli.BoolFlag{Name: "record", Usage: "record the session into the replays folder of the data folder, to replay and check later with 'host replay verify': a start save, then every command with its tick and every state-hash checkpoint (a few MB an hour at 100 commands a second)"},
		&cli.IntFlag{Name: "record-segment-mib", Value: int(d.SegmentBytes >> 20), Usage: "with --record: begin a new segment, from a new start save, once one holds this many MiB of commands and checkpoints"},
		&cli.IntFlag{Name: "record-keep", Value: d.Keep, Usage: "with --record: segments kept, the oldest removed first"},
	}
}

// recordConfig sets cfg.Record from the options, the segments going to
// the replays folder of data.
func recordConfig(c *cli.Context, data string, cfg *host.Config) error {
	if !c.Bool("record") {
		if c.IsSet("record-segment-mib") || c.IsSet("record-keep") {
			return cliutil.Usagef("--record-segment-mib and --record-keep need --record")
		}
		return nil
	}
	mib, keep := c.Int("record-segment-mib"), c.Int("record-keep")
	if mib < 1 || keep < 1 {
		return cliutil.Usagef("--record-segment-mib %d, --record-keep %d: each at least 1", mib, keep)
	}
	cfg.Record = host.RecordConfig{Dir: filepath.Join(data, replayDirName), SegmentBytes: int64(mib) << 20, Keep: keep,
		Version: cliutil.Version(wire.ProtocolVersion)}
	return nil
}

func replayCommand() *cli.Command {
	return &cli.Command{
		Name:  "replay",
		Usage: "summarise and check the recordings 'host serve --record' writes",
		Description: "A recording is one file per segment (" + replay.Ext + ") in the replays folder of the data\n" +
			"folder: a start save, then every command the host stamped and every checkpoint it took.\n" +
			"Each segment replays on its own.",
		Subcommands: []*cli.Command{
			{
				Name:      "info",
				Usage:     "summarise a segment: game, ticks, duration, commands, players, checkpoints, size",
				ArgsUsage: "FILE",
				Action:    replayInfo,
			},
			{
				Name: "verify",
				Usage: "replay a segment headless from its start save and check every checkpoint the host took; " +
					"exit 0 when all match, 1 naming the first tick that differs",
				UsageText: "host replay verify [--content DIR ...] FILE\n\n" +
					"Give the same --content as the host ran with: the start save is loaded with it.",
				Flags:  contentcli.Flags(),
				Action: replayVerify,
			},
		},
	}
}

// replayFile is the one FILE argument of a replay subcommand.
func replayFile(c *cli.Context) (string, error) {
	if c.NArg() != 1 {
		return "", cliutil.Usagef("give the recording: host replay %s FILE", c.Command.Name)
	}
	path := c.Args().First()
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("no recording at %s", path)
	}
	return path, nil
}

func replayInfo(c *cli.Context) error {
	path, err := replayFile(c)
	if err != nil {
		return err
	}
	in, err := replay.Summarise(path)
	if err != nil {
		return err
	}
	printReplayInfo(c, path, in)
	return nil
}

// printReplayInfo prints a segment's summary.
func printReplayInfo(c *cli.Context, path string, in replay.Info) {
	w := cliutil.Out(c)
	h := in.Header
	ticks := in.LastTick - in.FirstTick
	kind := ""
	if h.Relay {
		kind = " (a relay session: the arbiter's world and checkpoints)"
	}
	fmt.Fprintf(w, "%s: game %q%s, segment %d, recorded by %s from %s\n", path, h.Game, kind, h.Segment, orDash(h.Version),
		h.StartedAt().UTC().Format(time.RFC3339))
	fmt.Fprintf(w, "ticks %d..%d: %d ticks, %s at %d ticks/s\n", in.FirstTick, in.LastTick, ticks,
		(time.Duration(ticks) * time.Second / time.Duration(max(1, h.TickRate))).Round(time.Second), h.TickRate)
	fmt.Fprintf(w, "%d commands from %d players %v, %d checkpoints\n", in.Commands, len(in.Players), in.Players, in.Checkpoints)
	fmt.Fprintf(w, "%.2f MiB: start save %.2f MiB, commands and checkpoints %.2f MiB\n",
		float64(in.Bytes)/(1<<20), float64(in.StartBytes)/(1<<20), float64(in.CommandBytes)/(1<<20))
	switch {
	case in.Rotated:
		fmt.Fprintln(w, "complete: the host went on in the next segment")
	case in.Complete:
		fmt.Fprintln(w, "complete: the session stopped here")
	default:
		fmt.Fprintf(w, "cut short (%s): the host crashed or is still recording; everything before replays\n", in.Cut)
	}
}

// orDash is s, or "-" for nothing.
func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func replayVerify(c *cli.Context) error {
	path, err := replayFile(c)
	if err != nil {
		return err
	}
	r, err := replay.Open(path)
	if err != nil {
		return err
	}
	relay := r.Header().Relay
	r.Close()
	if relay {
		return fmt.Errorf("%s was recorded by a relay host: its world is the arbiter's game, which only that game can replay "+
			"(the format is section 16 of docs/protocol.md); 'host replay info' summarises it", path)
	}
	bundle, err := contentcli.FromFlags(c)
	if err != nil {
		return err
	}
	load := func(save string) (lockstep.Sim, error) {
		f, err := saves.Read(save)
		if err != nil {
			return nil, err
		}
		if err := sameContent(f.Meta, bundle); err != nil {
			return nil, err
		}
		return hostcontent.LoadSave(bundle, f)
	}
	w, errOut := cliutil.Out(c), cliutil.ErrOut(c)
	last := time.Now()
	progress := func(tick, end uint64) {
		if time.Since(last) >= 2*time.Second {
			last = time.Now()
			fmt.Fprintf(errOut, "replaying: tick %d of %d\n", tick, end)
		}
	}
	start := time.Now()
	res, err := replay.Verify(path, load, progress)
	if err != nil {
		return err
	}
	took := time.Since(start)
	played := time.Duration(res.LastTick-res.FirstTick) * time.Second / time.Duration(max(1, res.Header.TickRate))
	if !res.OK() {
		fmt.Fprintf(w, "%s: FAILED at tick %d: %s\n", path, res.FailedTick, res.Failure)
		fmt.Fprintf(w, "the last checkpoint that matched is tick %d: the replay departs from the host in the commands and steps between the two\n",
			res.GoodTick)
		return cli.Exit("", 1)
	}
	fmt.Fprintf(w, "%s: ok, %d checkpoints match over %d ticks (%d commands); replayed in %s, played in %s\n",
		path, res.Checked, res.Ticks, res.Commands, took.Round(time.Millisecond), played.Round(time.Second))
	if !res.Complete {
		fmt.Fprintf(w, "the segment was cut short (%s): checked up to where it ends\n", res.Cut)
	}
	return nil
}
