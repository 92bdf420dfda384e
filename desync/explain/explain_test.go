package explain

import (
	"testing"

	"github.com/lockhost/lockhost/desync"
	"github.com/lockhost/lockhost/lockstep"
	"github.com/lockhost/lockhost/lockstep/locksteptest"
)

// The colony game's fault corpus (game/colony, TestExplainFaultCorpus)
// tests explanations of a game that traces and diffs its state. These
// test a game that does neither: it still gets the first differing tick,
// the kind and the differing maps.

// counterRun is one side of a window of the counter game: its state at
// From, the commands it applied, its live trace and its state at To.
type counterRun struct {
	start *locksteptest.Counters
	cmds  []lockstep.Command
	live  []lockstep.TickTrace
	end   lockstep.Sim
}

// runCounters runs the counter game from a fresh world over ticks
// 0..to-1: the host adds 1 to map 1 at ticks 3 and 5; the player's side
// is changed by edit, called before each tick's commands, which returns
// how many times the player applies them (1 as the host does).
func runCounters(to uint64, edit func(c *locksteptest.Counters, tick uint64) int) (host, player counterRun) {
	runs := [2]*counterRun{&host, &player}
	for k, r := range runs {
		sim := locksteptest.New(3, 16)
		r.start = sim.Clone().(*locksteptest.Counters)
		log := lockstep.NewTraceLog(int(to))
		for t := uint64(0); t < to; t++ {
			n := 1
			if k == 1 && edit != nil {
				n = edit(sim, t)
			}
			if t == 3 || t == 5 {
				c := sim.AddCommand(1, 1)
				c.Tick = t
				for range n {
					if sim.Apply(c) == nil {
						r.cmds = append(r.cmds, c)
						log.Applied(c)
					}
				}
			}
			sim.Step()
			log.Stepped(sim)
		}
		r.live, r.end = log.Since(0), sim.Clone()
	}
	return host, player
}

func side(r counterRun) Side {
	return Side{
		Start:    func() (lockstep.Sim, error) { return r.start.Clone(), nil },
		Commands: r.cmds, Live: r.live, End: r.end,
	}
}

func TestExplainWithoutDiffer(t *testing.T) {
	tests := []struct {
		name string
		edit func(c *locksteptest.Counters, tick uint64) int
		tick uint64
		kind string
	}{
		{"command applied twice", func(c *locksteptest.Counters, tick uint64) int {
			if tick == 5 {
				return 2
			}
			return 1
		}, 5, desync.KindCommand},
		{"command dropped", func(c *locksteptest.Counters, tick uint64) int {
			if tick == 3 {
				return 0
			}
			return 1
		}, 3, desync.KindCommand},
		// Not traced (the game is no Tracer) and not reproduced by the
		// re-simulation: only a bound on the tick.
		{"state changed outside a step", func(c *locksteptest.Counters, tick uint64) int {
			if tick == 7 {
				_ = c.Perturb(1)
			}
			return 1
		}, 9, desync.KindOutside},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, p := runCounters(10, tt.edit)
			ex, err := Explain(Input{From: 0, To: 10, Maps: []int32{1}, Host: side(h), Player: side(p)})
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s:\n%s", tt.name, ex)
			if ex.FirstTick != tt.tick || ex.Kind != tt.kind {
				t.Errorf("tick %d kind %q, want %d %q", ex.FirstTick, ex.Kind, tt.tick, tt.kind)
			}
			if tt.kind == desync.KindOutside {
				if ex.Exact || len(ex.Differences) != 1 || ex.Differences[0].Path != "map 1 / hash" {
					t.Error("want map 1 named and the tick bounded: an untraced change outside a step cannot be pinned to its tick")
				}
				return
			}
			if !ex.Exact || len(ex.Differences) < 2 || ex.Differences[len(ex.Differences)-1].Path != "map 1 / hash" {
				t.Errorf("want the command and map 1 named, got %+v", ex.Differences)
			}
		})
	}
}

func TestExplainRefusesBadWindows(t *testing.T) {
	h, p := runCounters(10, nil)
	if _, err := Explain(Input{From: 2, To: 10, Host: side(h), Player: side(p)}); err == nil {
		t.Error("a start state at tick 0 for a window from tick 2 was accepted")
	}
	if _, err := Explain(Input{From: 0, To: 10, Host: side(h)}); err == nil {
		t.Error("a player side without a start was accepted")
	}
}

func TestResimulateHashesEveryTick(t *testing.T) {
	h, _ := runCounters(10, nil)
	run, err := Resimulate(h.start.Clone(), h.cmds, 0, 10, []int32{0, 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(run.Hashes) != 10 || len(run.Trace) != 10 || run.Trace[3].NCommands != 1 || run.Trace[4].NCommands != 0 {
		t.Fatalf("run: %d hashes, %d traces", len(run.Hashes), len(run.Trace))
	}
	// Map 1 changes from tick 3 on, map 0 never.
	if run.Hashes[2][2] != run.Hashes[0][2] || run.Hashes[3][2] == run.Hashes[2][2] || run.Hashes[9][1] != run.Hashes[0][1] {
		t.Errorf("hashes do not follow the state: %v", run.Hashes)
	}
}

// twiceAtThree is ten ticks of counters where the player applied the
// command of tick 3 twice: the host's input, its half of the run, and
// the player's run.
func twiceAtThree(t *testing.T) (Input, *Run, counterRun) {
	t.Helper()
	h, p := runCounters(10, func(_ *locksteptest.Counters, tick uint64) int {
		if tick == 3 {
			return 2
		}
		return 1
	})
	in := Input{From: 0, To: 10, Maps: []int32{1}, Host: side(h)}
	hr, err := HostRun(in)
	if err != nil {
		t.Fatal(err)
	}
	return in, hr, p
}

// TestAnswerAndCombine runs the two halves apart, as host and player
// would: the player answers the host's request, the host combines.
func TestAnswerAndCombine(t *testing.T) {
	in, hr, p := twiceAtThree(t)
	rep, err := Answer(Request{From: 0, To: 10, Maps: []int32{1}, Host: hr}, side(p))
	if err != nil {
		t.Fatal(err)
	}
	if rep.State == nil || rep.DiffTick != 3 || rep.End == nil {
		t.Fatalf("reply: state at %d %v, end %v", rep.DiffTick, rep.State != nil, rep.End != nil)
	}
	ex, err := Combine(in, hr, rep)
	if err != nil {
		t.Fatal(err)
	}
	if ex.FirstTick != 3 || ex.Kind != desync.KindCommand {
		t.Errorf("tick %d kind %s, want 3 command", ex.FirstTick, ex.Kind)
	}
	short, err := Answer(Request{From: 0, To: 8, Maps: []int32{1}, Host: hr}, side(p))
	if err == nil {
		_, err = Combine(in, hr, short)
	}
	if err == nil {
		t.Error("a reply for another window was combined")
	}
}
