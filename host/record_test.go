package host_test

import (
	"context"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/lockhost/lockhost/game/colony"
	"github.com/lockhost/lockhost/host"
	"github.com/lockhost/lockhost/join"
	"github.com/lockhost/lockhost/lockstep"
	"github.com/lockhost/lockhost/lockstep/locksteptest"
	"github.com/lockhost/lockhost/replay"
	"github.com/lockhost/lockhost/saves"
	"github.com/lockhost/lockhost/testing/hosttest"
	"github.com/lockhost/lockhost/testing/syncbuf"
	"github.com/lockhost/lockhost/testing/testkit"
)

// TestRecordReplays records a colony session in which a bot plays, with
// segments small enough that the host begins new ones as it goes: every
// segment replays headless through every checkpoint the host took, ends
// as it should (rotated, then stopped), and the oldest beyond Keep are
// gone.
func TestRecordReplays(t *testing.T) {
	content, set, err := colony.DefaultContent()
	if err != nil {
		t.Fatal(err)
	}
	world, err := colony.New(content, colony.Config{Seed: 11})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	// Past 1 KiB of commands and checkpoints after its start save, the
	// host begins the next segment.
	cfg := host.Config{TickRate: 240, Desync: host.DesyncConfig{HashEvery: 30},
		Limits: host.LimitConfig{CommandRate: 2000, CommandBurst: 2000}, Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
		Record: host.RecordConfig{Dir: dir, SegmentBytes: 1 << 10, Keep: 3}}
	h := hosttest.Start(t, cfg, host.Content{GameVersion: "1.5", Mods: []string{"lockhost.core"}, Databases: set.Summary()}, world)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s, err := join.Join(ctx, join.Config{Addr: h.Addr, Name: "Bot", Databases: set.Summary(),
		MapLoader: colony.MapLoader(content), Logger: testkit.Quiet()})
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = s.Run(ctx) }()
	rng := rand.New(rand.NewPCG(3, 4))
	sent := 0
	testkit.WaitWithin(t, 2*time.Minute, "four segments", func() bool {
		for range 20 {
			s.Do(func(sim lockstep.Sim) {
				if cmd, ok := colony.RandomCommand(sim.(*colony.World), rng); ok && s.Send(cmd.MapID, cmd.Kind, cmd.Payload) == nil {
					sent++
				}
			})
		}
		time.Sleep(5 * time.Millisecond)
		return len(segments(t, dir)) >= 3 && lastSegment(t, dir) >= 4
	})
	// The bot stops; the session goes on long enough for the newest
	// segment to hold checkpoints. That segment must begin after the bot
	// stopped: one begun while it played may be nearly full, and the
	// checkpoints alone would cut a new one, with none yet, just before
	// the host stops.
	botLast := lastSegment(t, dir)
	testkit.WaitFor(t, "100 quiet ticks into a segment begun after the bot stopped", func() bool {
		segs := segments(t, dir)
		r, err := replay.Open(segs[len(segs)-1])
		if err != nil {
			return false
		}
		defer r.Close()
		return r.Header().Segment > botLast && h.Server.Overview().Tick >= r.Header().StartTick+100
	})
	cancel()
	h.Stop(t)

	segs := segments(t, dir)
	if len(segs) != 3 {
		t.Fatalf("%d segments kept, want Keep (3): %v", len(segs), segs)
	}
	load := func(path string) (lockstep.Sim, error) {
		f, err := saves.Read(path)
		if err != nil {
			return nil, err
		}
		return saves.Load(f, nil, colony.MapLoader(content), 1<<30)
	}
	commands := 0
	for i, seg := range segs {
		res, err := replay.Verify(seg, load, nil)
		if err != nil {
			t.Fatalf("%s: %v", filepath.Base(seg), err)
		}
		last := i == len(segs)-1
		if !res.OK() || res.Checked == 0 || !res.Complete || res.Rotated == last {
			t.Fatalf("%s: %d checkpoints matched, failure %q, complete %v, rotated %v", filepath.Base(seg), res.Checked, res.Failure, res.Complete, res.Rotated)
		}
		if res.Ticks != res.LastTick-res.FirstTick {
			t.Fatalf("%s: simulated %d ticks of %d..%d", filepath.Base(seg), res.Ticks, res.FirstTick, res.LastTick)
		}
		commands += res.Commands
		t.Logf("%s: segment %d, ticks %d..%d, %d commands, %d checkpoints matched, %d bytes (start %d)",
			filepath.Base(seg), res.Header.Segment, res.FirstTick, res.LastTick, res.Commands, res.Checked, res.Bytes, res.StartBytes)
	}
	if commands == 0 || sent == 0 {
		t.Fatalf("the bot sent %d commands, the kept segments hold %d", sent, commands)
	}
}

// segments lists the recording's segments in dir, oldest first.
func segments(t *testing.T, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "rec-*"+replay.Ext))
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(m)
	return m
}

// lastSegment is the number of the newest segment in dir (0: none).
func lastSegment(t *testing.T, dir string) int {
	t.Helper()
	segs := segments(t, dir)
	if len(segs) == 0 {
		return 0
	}
	r, err := replay.Open(segs[len(segs)-1])
	if err != nil {
		return 0
	}
	defer r.Close()
	return r.Header().Segment
}

// TestRecordRelay records a relay session: the host begins once its
// arbiter has uploaded the world, and the segment holds the arbiter's
// world, the players' commands and the arbiter's checkpoints, so the game
// (here the test's counters game) replays it and matches every
// checkpoint.
func TestRecordRelay(t *testing.T) {
	var logs syncbuf.Buffer
	dir := t.TempDir()
	h := startRelay(t, host.Config{Desync: host.DesyncConfig{HashEvery: 20}, Record: host.RecordConfig{Dir: dir}}, &logs)
	arb := joinRelay(t, h.Addr, "Arbiter", true)
	alice := joinRelay(t, h.Addr, "Alice", false)
	var keys []string
	for i := range 30 {
		keys = append(keys, alice.sendAdd(t, int32(i%3), byte(i)))
		time.Sleep(5 * time.Millisecond)
	}
	testkit.WaitFor(t, "the arbiter to apply every command", func() bool {
		_, ok := arb.log.cmdTick(keys[len(keys)-1])
		return ok
	})
	testkit.WaitFor(t, "checkpoints after the last command", func() bool {
		segs := segments(t, dir)
		if len(segs) != 1 {
			return false
		}
		in, err := replay.Summarise(segs[0])
		last, _ := arb.log.cmdTick(keys[len(keys)-1])
		return err == nil && in.Checkpoints >= 3 && in.LastTick > last+40
	})
	h.Stop(t)
	seg := segments(t, dir)[0]
	res, err := replay.Verify(seg, func(path string) (lockstep.Sim, error) {
		f, err := saves.Read(path)
		if err != nil {
			return nil, err
		}
		return saves.Load(f, locksteptest.Load, nil, 1<<30)
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	// The commands stamped before the segment's start are in its start
	// save; every later one is in its frames.
	after := 0
	for _, k := range keys {
		if tk, _ := arb.log.cmdTick(k); tk >= res.FirstTick {
			after++
		}
	}
	if !res.Header.Relay || !res.OK() || res.Checked < 3 || res.Commands != after || after == 0 || !res.Complete {
		t.Fatalf("relay recording: relay %v, %d checkpoints matched, failure %q, %d commands, %d stamped from its start on, complete %v",
			res.Header.Relay, res.Checked, res.Failure, res.Commands, after, res.Complete)
	}
	t.Logf("relay segment: ticks %d..%d, %d commands, %d of the arbiter's checkpoints matched", res.FirstTick, res.LastTick, res.Commands, res.Checked)
}
