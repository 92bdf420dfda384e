package host

import (
	"io"
	"log/slog"
	"net"
	"testing"
	"time"

	"github.com/lockhost/lockhost/lockstep"
	"github.com/lockhost/lockhost/lockstep/locksteptest"
	"github.com/lockhost/lockhost/snapshot"
	"github.com/lockhost/lockhost/wire"
)

// replayTest is a session at tick 12000 whose rejoin window holds n
// commands of payload bytes each, two a tick from tick 1 on, with the
// work it starts off its goroutine collected instead of run.
type replayTest struct {
	s    *session
	work []func()
}

func newReplayTest(t *testing.T, cfg Config, n, payload int) *replayTest {
	t.Helper()
	cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	rt := &replayTest{s: newSession(cfg, locksteptest.New(2, 64))}
	bans, err := loadBans("")
	if err != nil {
		t.Fatal(err)
	}
	rt.s.admin.bans = bans
	rt.s.replays.spawn = func(work func()) { rt.work = append(rt.work, work) }
	for range 12000 {
		rt.s.auth.Advance(true)
	}
	rt.addCommands(1, n, payload)
	return rt
}

// addCommands adds n commands to the window, two a tick from tick from.
func (rt *replayTest) addCommands(from uint64, n, payload int) {
	cmds := make([]lockstep.Command, n)
	for i := range cmds {
		cmds[i] = lockstep.Command{Tick: from + uint64(i/2), Seq: uint32(i % 2), Kind: 1, Player: 2, Payload: make([]byte, payload)}
		cmds[i].Payload[0] = byte(i)
	}
	rt.s.window.add(cmds)
}

// decide weighs a held-world rejoin from tick 1 whose record the host
// accepted, on codec gzip.
func (rt *replayTest) decide() (heldDecision, bool) {
	h := &wire.HeldWorld{Tick: 1, Checks: []wire.HeldCheck{{Tick: 1, World: 7}}}
	a := &admission{r: joinReq{held: h, conn: &conn{codec: snapshot.Gzip}},
		rj: &rejoin{held: heldRecord{good: heldCheck{tick: 1, world: 7}, checked: true}}}
	return rt.s.decideHeld(a)
}

// settle runs the work started off the session goroutine, then what it
// handed back to the session's queue.
func (rt *replayTest) settle() {
	work := rt.work
	rt.work = nil
	for _, w := range work {
		w()
	}
	for {
		select {
		case fn := <-rt.s.calls:
			fn()
		default:
			return
		}
	}
}

// replayed is the commands of d's replay.
func replayed(t *testing.T, d heldDecision) []lockstep.Command {
	t.Helper()
	raw, err := snapshot.Inflate(d.replay.Codec, d.replay.Data, wire.MaxReplayRaw)
	if err != nil {
		t.Fatal(err)
	}
	cmds, _, err := wire.DecodeReplay(raw)
	if err != nil {
		t.Fatal(err)
	}
	return cmds
}

// TestHeldReplayBuiltOffSession: the session goroutine does not lay out
// or compress a held-world rejoin's replay: it hands the commands to a
// worker, whose replay comes back through the session's queue and
// answers the rejoin.
func TestHeldReplayBuiltOffSession(t *testing.T) {
	rt := newReplayTest(t, DefaultConfig(), 20000, 8)
	if _, wait := rt.decide(); !wait {
		t.Error("the rejoin did not wait for its replay")
	}
	if n := rt.s.replays.layouts.Load(); n != 0 {
		t.Fatalf("the session goroutine laid out %d replays while deciding", n)
	}
	if len(rt.work) != 1 {
		t.Fatalf("%d builds started off the session goroutine, want 1", len(rt.work))
	}
	rt.settle()
	d, _ := rt.decide()
	if d.result != wire.RejoinHeld {
		t.Fatalf("once built: %v, want held", d.result)
	}
	if got := replayed(t, d); len(got) != 20000 {
		t.Fatalf("the replay holds %d commands, want 20000", len(got))
	}
	if n := rt.s.replays.layouts.Load(); n != 1 {
		t.Errorf("%d layouts, want 1", n)
	}
}

// TestHeldReplaySizeCheckedFirst: a replay over its limit (here half a
// 16 KiB send queue) is turned down before anything is laid out or
// compressed.
func TestHeldReplaySizeCheckedFirst(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Limits.SendQueueBytes = 16 << 10
	rt := newReplayTest(t, cfg, 2000, 8)
	if d, _ := rt.decide(); d.result != wire.RejoinTooLarge {
		t.Fatalf("%v, want too_large", d.result)
	}
	if n := rt.s.replays.layouts.Load(); n != 0 || len(rt.work) != 0 {
		t.Fatalf("%d layouts and %d builds for a replay over the limit, want none", n, len(rt.work))
	}
}

// TestHeldReplayReused: a second rejoin from the same position takes the
// replay already built, with no new layout, and the commands stamped
// since as its tail; a second rejoin while the replay is being built
// waits for the same build.
func TestHeldReplayReused(t *testing.T) {
	rt := newReplayTest(t, DefaultConfig(), 20000, 8)
	rt.decide()
	rt.decide()
	if len(rt.work) != 1 {
		t.Fatalf("two rejoins from one position started %d builds, want 1", len(rt.work))
	}
	rt.settle()
	first, _ := rt.decide()
	rt.addCommands(12000, 10, 8) // stamped after the replay was built
	rt.s.auth.Advance(true)
	second, _ := rt.decide()
	rt.settle()
	if second.result != wire.RejoinHeld || string(second.replay.Data) != string(first.replay.Data) {
		t.Fatalf("the second rejoin: %v, its replay the first's: %v", second.result, string(second.replay.Data) == string(first.replay.Data))
	}
	if n := rt.s.replays.layouts.Load(); n != 1 {
		t.Errorf("%d layouts for three rejoins from one position, want 1", n)
	}
	if len(second.tail) != 10 || second.tail[0].Tick != 12000 || second.granted != 12000 {
		t.Errorf("the second rejoin's tail: %d commands after a replay to tick %d; want 10 from tick 12000, after 12000",
			len(second.tail), second.granted)
	}
}

// TestHeldReplayTailBounded: a kept replay is not taken when the commands
// stamped since would fill more than a quarter of the send queue as
// ticks: the replay is built again.
func TestHeldReplayTailBounded(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Limits.SendQueue = 16 // four packets: three ticks and the grant
	rt := newReplayTest(t, cfg, 200, 8)
	rt.decide()
	rt.settle()
	rt.addCommands(12000, 6, 8) // three ticks
	if d, wait := rt.decide(); wait || len(d.tail) != 6 {
		t.Fatalf("a tail of three ticks: waits %v, %d commands; want it sent, 6", wait, len(d.tail))
	}
	rt.addCommands(12003, 2, 8) // a fourth
	if _, wait := rt.decide(); !wait || len(rt.work) != 1 {
		t.Fatalf("a tail of four ticks: waits %v, %d builds started; want a new build", wait, len(rt.work))
	}
}

// pipeConn is a conn whose client end reads and drops everything.
func pipeConn(t *testing.T) *conn {
	t.Helper()
	host, client := net.Pipe()
	go func() { _, _ = io.Copy(io.Discard, client) }()
	c := newConn(host, 1024, 8<<20, time.Minute, slog.New(slog.NewTextHandler(io.Discard, nil)))
	t.Cleanup(func() { c.close(wire.ReasonServerClosing, ""); client.Close() })
	return c
}

// heldJoin is the join request of player id, name, that left holding its
// world at tick from, whose report there the host accepted.
func (rt *replayTest) heldJoin(t *testing.T, id int32, name string, from uint64) joinReq {
	t.Helper()
	token := rt.s.rejoins.issue(id, name, false, nil)
	rt.s.rejoins.left(id, time.Now(), heldRecord{good: heldCheck{tick: from, world: 7}, checked: true})
	return joinReq{token: token, id: id, name: name, passwordOK: true, conn: pipeConn(t), reply: make(chan joinReply, 1),
		held: &wire.HeldWorld{Tick: from, Checks: []wire.HeldCheck{{Tick: from, World: 7}}}}
}

// answered is the reply r got, if any.
func answered(r joinReq) (joinReply, bool) {
	select {
	case rep := <-r.reply:
		return rep, true
	default:
		return joinReply{}, false
	}
}

// TestHeldReplayBacklog: rejoins from two positions at once get one build
// at a time: the second waits, unanswered, for the first to end, then
// for its own, and both are let in from their held worlds.
func TestHeldReplayBacklog(t *testing.T) {
	rt := newReplayTest(t, DefaultConfig(), 20000, 8)
	ann, bob := rt.heldJoin(t, 1, "Ann", 1), rt.heldJoin(t, 2, "Bob", 2)
	rt.s.join(ann)
	rt.s.join(bob)
	if len(rt.work) != 1 {
		t.Fatalf("%d builds under way, want 1", len(rt.work))
	}
	rt.settle()
	if rep, ok := answered(ann); !ok || !rep.replayed {
		t.Fatalf("Ann after her build: answered %v, %+v; want let in from her held world", ok, rep)
	}
	if _, ok := answered(bob); ok || len(rt.work) != 1 {
		t.Fatalf("Bob after Ann's build: answered %v, %d builds under way; want waiting for his own", ok, len(rt.work))
	}
	rt.settle()
	if rep, ok := answered(bob); !ok || !rep.replayed {
		t.Fatalf("Bob after his build: answered %v, %+v; want let in from his held world", ok, rep)
	}
}
