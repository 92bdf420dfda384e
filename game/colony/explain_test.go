package colony

import (
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/lockhost/lockhost/desync"
	"github.com/lockhost/lockhost/desync/explain"
	"github.com/lockhost/lockhost/lockstep"
)

// The fault corpus: each case plants one fault in the player's world only,
// at a known tick, runs the host's world and the player's side by side
// with the same bot commands, finds the desync at the next checkpoint as
// a host does, and checks that the explanation names the planted tick,
// the kind of fault, and the object and field it changed.

// corpusEvery is the corpus's checkpoint interval.
const corpusEvery = lockstep.DefaultHashEvery

// planted is one case of the corpus.
type planted struct {
	name string
	tick uint64
	kind string // desync.Kind*
	// want matches the path of a difference the explanation must list;
	// values, where not empty, its host and player values.
	want   string
	values [2]string
	// setup prepares the player's world before the run (plants a fault).
	setup func(t *testing.T, p *World, tick uint64)
	// before runs on the player's world right before the tick's commands
	// and returns the world to go on with.
	before func(t *testing.T, p *World) *World
	// spawn plants a SpawnThing command of this thing on both sides at
	// the tick; move plants a MovePawn command instead.
	spawn string
	move  bool
	// apply is how many times the player applies the planted command
	// (default once).
	apply int
	// inexact: the planted fault is outside the trace, and the
	// explanation can only bound the tick.
	inexact bool
	// ownStart: the player re-simulates from a copy of its own state at
	// the window's start rather than from the host's encoding of it.
	ownStart bool
	// probe: the fault (planted by setup) only shows on some ticks. It is
	// armed at the first tick from tick on at which it changes the state,
	// found by stepping copies of the two worlds through each tick first.
	probe bool
}

// never is a planted fault's tick until the harness arms it.
const never = ^uint64(0)

func corpus() []planted {
	return []planted{
		{name: "field changed outside a step", tick: 130, kind: desync.KindOutside, want: `^map 0 / pawn \d+ / x$`,
			before: func(t *testing.T, p *World) *World {
				pw := &p.maps[0].Pawns[0]
				pw.X = pw.X ^ 1 // one cell across
				p.maps[0].changed = true
				p.maps[0].settle()
				return p
			}},
		{name: "command applied twice", tick: 150, kind: desync.KindCommand, spawn: "Steel", apply: 2,
			want: `^map 0 / thing \d+ \(Steel\) / count$`, values: [2]string{"5", "10"}},
		{name: "command dropped", tick: 170, kind: desync.KindCommand, spawn: "Steel", apply: -1,
			want: `^tick 170 / command \d+ \(map 0, kind 1, player 1\)$`, values: [2]string{"applied once", "not applied"}},
		{name: "order from a map's iteration", tick: 190, kind: desync.KindOutside, want: `^map \d / (pawn \d+ / .*|rng state)$`,
			probe: true,
			setup: func(t *testing.T, p *World, tick uint64) {
				runs := 0 // the live run goes one way, the re-simulation another
				p.fault = &fault{kind: faultPawnOrder, tick: tick, order: func() bool { runs++; return runs == 1 }}
			}},
		{name: "tie broken differently in path finding", tick: 200, kind: desync.KindSimulation, move: true, probe: true,
			want:  `^map 0 / pawn \d+ / path step \d+$`,
			setup: func(t *testing.T, p *World, tick uint64) { p.fault = &fault{kind: faultPathTie, tick: tick} }},
		{name: "integer overflow on one side", tick: 250, kind: desync.KindSimulation, want: `^map 0 / thing \d+ \(\w+\) / growth$`,
			setup: func(t *testing.T, p *World, tick uint64) { p.fault = &fault{kind: faultOverflow, tick: tick} }},
		{name: "value read from the wall clock", tick: 2 * tempTicks, kind: desync.KindOutside, want: `^world / temperature$`,
			setup: func(t *testing.T, p *World, tick uint64) {
				reading := int32(0)
				p.fault = &fault{kind: faultClock, tick: tick, clock: func() int32 { reading++; return reading }}
			}},
		{name: "field missing from the clone", tick: 220, kind: desync.KindOutside, want: `^map \d / pawn \d+ / move cool$`,
			setup:  func(t *testing.T, p *World, tick uint64) { p.fault = &fault{kind: faultCloneDrop, tick: tick} },
			before: func(t *testing.T, p *World) *World { return p.clone() }},
		{name: "field missing from the encoding", tick: 230, kind: desync.KindOutside, want: `^map 1 / pawn \d+ / hunger$`,
			values: [2]string{"", "3"}, // one tick's hunger on top of 0
			setup:  func(t *testing.T, p *World, tick uint64) { p.fault = &fault{kind: faultEncodeDrop, tick: tick} },
			before: func(t *testing.T, p *World) *World {
				b, err := p.MarshalMap(1) // a save and load of map 1, say
				if err != nil {
					t.Fatal(err)
				}
				if err := p.ReplaceMap(lockstep.MapBlob{ID: 1, Data: b}); err != nil {
					t.Fatal(err)
				}
				return p
			}},
		// The player's walls have fewer hit points than the host's walls
		// have: the host's encoding would not load on the player (a real
		// player with this content could not have joined), so it starts
		// from its own copy.
		{name: "different def value", tick: 260, kind: desync.KindSimulation, spawn: "Wall", want: `^map 0 / thing \d+ \(Wall\) / hp$`,
			values:   [2]string{"300", "290"},
			ownStart: true,
			setup: func(t *testing.T, p *World, tick uint64) {
				r := *p.r
				r.things = slices.Clone(r.things)
				r.things[r.thingByName["Wall"]].hitPoints -= 10
				p.r = &r
			}},
		{name: "thing spawned with a different ID", tick: 270, kind: desync.KindSimulation, spawn: "Steel",
			want:  `^map 0 / thing \d+ \(Steel\)$`,
			setup: func(t *testing.T, p *World, tick uint64) { p.fault = &fault{kind: faultSkipID, tick: tick} }},
		{name: "thing field changed outside a step (not traced)", tick: 280, kind: desync.KindOutside, inexact: true,
			want: `^map 0 / thing \d+ \(\w+\) / count$`,
			before: func(t *testing.T, p *World) *World {
				if err := p.Perturb(0); err != nil {
					t.Fatal(err)
				}
				return p
			}},
	}
}

// TestExplainFaultCorpus runs every case of the corpus.
func TestExplainFaultCorpus(t *testing.T) {
	c := testContent(t)
	base := mustNew(t, c, Config{Maps: 2, Width: 64, Height: 48, Seed: 11, PawnsPerMap: 40, ThingsPerMap: 200})
	for base.Tick() < 120 {
		base.Step()
	}
	for _, pc := range corpus() {
		t.Run(strings.ReplaceAll(pc.name, " ", "_"), func(t *testing.T) {
			ex, tick := runPlanted(t, base, pc)
			pc.tick = tick
			t.Logf("%s, planted at tick %d:\n%s", pc.name, pc.tick, ex)
			checkExplanation(t, pc, ex)
		})
	}
}

func checkExplanation(t *testing.T, pc planted, ex *desync.Explanation) {
	t.Helper()
	if pc.inexact {
		if ex.Exact || ex.From > pc.tick || ex.FirstTick < pc.tick {
			t.Errorf("tick %d (exact %v, from %d), want a bound around %d", ex.FirstTick, ex.Exact, ex.From, pc.tick)
		}
	} else if !ex.Exact || ex.FirstTick != pc.tick {
		t.Errorf("first differing tick %d (exact %v), want %d", ex.FirstTick, ex.Exact, pc.tick)
	}
	if ex.Kind != pc.kind {
		t.Errorf("kind %q, want %q", ex.Kind, pc.kind)
	}
	re := regexp.MustCompile(pc.want)
	if !slices.ContainsFunc(ex.Differences, func(d desync.Difference) bool {
		return re.MatchString(d.Path) && (pc.values[0] == "" || pc.values[0] == d.Host) && (pc.values[1] == "" || pc.values[1] == d.Player)
	}) {
		t.Errorf("no difference matches %s %v", pc.want, pc.values)
	}
}

// side is one machine of a corpus run: its world, its trace (with the
// commands it applied), and a copy of its state at the last checkpoint.
type side struct {
	w     *World
	log   *lockstep.TraceLog
	start *World
}

func (s *side) checkpoint() { s.start = s.w.clone() }

func (s *side) apply(t *testing.T, c lockstep.Command, times int) {
	for range times {
		if err := s.w.Apply(c); err != nil {
			t.Fatalf("tick %d: %v", c.Tick, err)
		}
		s.log.Applied(c)
	}
}

// runPlanted runs host and player from copies of base, the fault planted
// on the player, until a checkpoint shows the desync, and explains it. It
// returns the explanation and the tick the fault was planted at.
func runPlanted(t *testing.T, base *World, pc planted) (*desync.Explanation, uint64) {
	host := &side{w: base.clone(), log: lockstep.NewTraceLog(4 * corpusEvery)}
	player := &side{w: base.clone(), log: lockstep.NewTraceLog(4 * corpusEvery)}
	if pc.setup != nil {
		tick := pc.tick
		if pc.probe {
			tick = never
		}
		pc.setup(t, player.w, tick)
	}
	bot := rand.New(rand.NewPCG(3, uint64(pc.tick)))
	from := uint64(0)
	for tick := base.Tick(); tick <= pc.tick+4*corpusEvery; tick++ {
		if tick%corpusEvery == 0 {
			if maps := differing(host.w, player.w); maps != nil {
				return explainRun(t, host, player, from, tick, maps, pc.ownStart), pc.tick
			}
			from = tick
			host.checkpoint()
			player.checkpoint()
		}
		if host.start == nil {
			continue // no checkpoint yet: the window needs a start
		}
		if tick == pc.tick && pc.before != nil {
			player.w = pc.before(t, player.w)
		}
		cmds := tickCommands(t, host.w, bot, tick, pc)
		if pc.probe && tick >= pc.tick && player.w.fault.tick == never {
			if bites(t, host.w, player.w, cmds, tick) {
				player.w.fault.tick = tick
			}
			pc.tick = tick
		}
		for i, c := range cmds {
			host.apply(t, c, 1)
			n := 1
			if tick == pc.tick && i == len(cmds)-1 && pc.apply != 0 {
				n = max(0, pc.apply)
			}
			player.apply(t, c, n)
		}
		for _, s := range []*side{host, player} {
			s.w.Step()
			s.log.Stepped(s.w)
		}
	}
	t.Fatalf("no desync within %d ticks of the fault", 4*corpusEvery)
	return nil, 0
}

// bites tells whether the player's fault, armed at tick, changes the
// state: it steps copies of both worlds through the tick.
func bites(t *testing.T, host, player *World, cmds []lockstep.Command, tick uint64) bool {
	h, p := host.clone(), player.clone()
	p.fault = &fault{kind: player.fault.kind, tick: tick, order: func() bool { return true }}
	for _, w := range []*World{h, p} {
		for _, c := range cmds {
			if err := w.Apply(c); err != nil {
				t.Fatalf("tick %d: %v", tick, err)
			}
		}
		w.Step()
	}
	return differing(h, p) != nil
}

// tickCommands are the commands of one tick: a bot's, now and then, and
// the case's planted command at its tick, last.
func tickCommands(t *testing.T, w *World, bot *rand.Rand, tick uint64, pc planted) []lockstep.Command {
	var cmds []lockstep.Command
	if bot.IntN(8) == 0 {
		if c, ok := RandomCommand(w, bot); ok {
			cmds = append(cmds, c)
		}
	}
	if tick == pc.tick && (pc.spawn != "" || pc.move) {
		cmds = append(cmds, plantedCommand(t, w, pc))
	}
	for i := range cmds {
		cmds[i].Tick, cmds[i].Seq, cmds[i].Player = tick, uint32(i), 1
	}
	return cmds
}

// plantedCommand is the case's command on map 0: a spawn on a cell with
// nothing on it, or the first pawn sent some way off in its region.
func plantedCommand(t *testing.T, w *World, pc planted) lockstep.Command {
	m := w.maps[0]
	m.derive(w.r)
	if pc.move {
		p := &m.Pawns[0]
		home := m.regionAt(w.r, p.X, p.Y)
		for d := int32(20); d > 3; d-- {
			for _, xy := range [][2]int32{{p.X + d, p.Y + d/2}, {p.X - d, p.Y - d/2}, {p.X + d/2, p.Y - d}, {p.X - d/2, p.Y + d}} {
				if m.in(xy[0], xy[1]) && m.passable(w.r, m.idx(xy[0], xy[1])) && m.regionOf(w.r, m.idx(xy[0], xy[1])) == home {
					return MovePawn(0, p.ID, int(xy[0]), int(xy[1]))
				}
			}
		}
		t.Fatal("no cell to send the pawn to")
	}
	for c := int32(0); c < m.W*m.H; c++ {
		if m.passable(w.r, c) && m.cells[c] == (cellInfo{}) {
			n := 5
			if w.r.things[w.r.thingByName[pc.spawn]].stackLimit == 1 {
				n = 1
			}
			return SpawnThing(0, pc.spawn, int(c%m.W), int(c/m.W), n)
		}
	}
	t.Fatal("no free cell")
	return lockstep.Command{}
}

// differing lists the maps whose hashes differ, [] when only the world
// hash does, nil when nothing differs.
func differing(a, b *World) []int32 {
	var out []int32
	for _, id := range a.MapIDs() {
		ha, _ := a.MapHash(id)
		hb, _ := b.MapHash(id)
		if ha != hb {
			out = append(out, id)
		}
	}
	if out == nil && a.WorldHash() != b.WorldHash() {
		return []int32{}
	}
	return out
}

// fromHost starts the player's re-simulation as a session would, without
// a copy of the player's own state: from the host's encoding of its state
// at the window's start (the hashes matched there), decoded by the
// player's code (its rules and planted fault).
func fromHost(t *testing.T, host, player *World) func() (lockstep.Sim, error) {
	world, maps := snapshot(t, host)
	return func() (lockstep.Sim, error) {
		w, err := load(player.r, world, maps)
		if err != nil {
			return nil, err
		}
		w.fault = player.fault
		return w, nil
	}
}

// explainRun explains the desync found at checkpoint to on another
// goroutine, as a host would, while both live worlds step on: it works
// on copies only (the race detector checks that they share nothing
// written).
func explainRun(t *testing.T, host, player *side, from, to uint64, maps []int32, ownStart bool) *desync.Explanation {
	t.Helper()
	start := func(w *World) func() (lockstep.Sim, error) {
		return func() (lockstep.Sim, error) { return w.clone(), nil }
	}
	in := explain.Input{
		From: from, To: to, Maps: maps,
		Host:   explain.Side{Start: start(host.start), Commands: host.log.Commands(from), Live: host.log.Since(from), End: host.w.clone()},
		Player: explain.Side{Start: fromHost(t, host.start, player.w), Commands: player.log.Commands(from), Live: player.log.Since(from), End: player.w.clone()},
	}
	if ownStart {
		in.Player.Start = start(player.start)
	}
	type result struct {
		ex  *desync.Explanation
		err error
	}
	done := make(chan result, 1)
	go func() {
		ex, err := explain.Explain(in)
		done <- result{ex, err}
	}()
	for range 20 {
		host.w.Step()
		player.w.Step()
	}
	r := <-done
	if r.err != nil {
		t.Fatalf("explain %d..%d: %v", from, to, r.err)
	}
	return r.ex
}
