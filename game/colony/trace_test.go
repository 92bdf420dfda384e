package colony

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/lockhost/lockhost/lockstep"
)

// traceKeep is the trace a session keeps: the window from the last
// matching checkpoint to the differing one, and as long again for the
// host's request to arrive (a second at 60 ticks a second; a host that
// needs longer tells the player to set the window aside first). A longer
// log costs more than its memory: each tick writes to a part of it the
// caches have long dropped (at 240 ticks the trace costs about half a
// percent of a step more).
const traceKeep = 2 * lockstep.DefaultHashEvery

// BenchmarkStepTraced is BenchmarkStep with the always-on trace: one
// lockstep.TraceLog record after every Step, as a session keeps it. Its
// time over BenchmarkStep's is the trace's cost.
func BenchmarkStepTraced(b *testing.B) {
	w := benchWorld(b)
	log := lockstep.NewTraceLog(traceKeep)
	for range traceKeep { // the log's buffers, as a session has them
		log.Stepped(w)
	}
	b.ResetTimer()
	for b.Loop() {
		w.Step()
		log.Stepped(w)
	}
}

// BenchmarkTraceShare steps the default world and traces it in
// alternating blocks of ticks, and reports the trace's time as a share of
// the step's (trace-%). On a busy machine two separate benchmarks
// (BenchmarkStep, BenchmarkStepTraced) drift apart by more than the
// trace costs; blocks a few hundred microseconds long see the same load.
// The budget is 5%.
func BenchmarkTraceShare(b *testing.B) {
	w := benchWorld(b)
	log := lockstep.NewTraceLog(traceKeep)
	for range traceKeep {
		log.Stepped(w)
	}
	const block = 64
	var step, trace time.Duration
	b.ResetTimer()
	for b.Loop() {
		t0 := time.Now()
		for range block {
			w.Step()
		}
		t1 := time.Now()
		for range block {
			log.Stepped(w)
		}
		step, trace = step+t1.Sub(t0), trace+time.Since(t1)
	}
	b.ReportMetric(100*float64(trace)/float64(step), "trace-%")
}

// TestTraceLogRecordsTicks checks that a TraceLog fed by a stepping world
// holds its last ticks, their commands and the maps' traces, and that
// equal worlds give equal traces and a changed pawn a different one.
func TestTraceLogRecordsTicks(t *testing.T) {
	c := testContent(t)
	a := mustNew(t, c, smallConfig(3))
	b := a.clone()
	la, lb := lockstep.NewTraceLog(5), lockstep.NewTraceLog(5)
	for range 8 {
		cmd := MovePawn(0, a.maps[0].Pawns[0].ID, 3, 3)
		cmd.Tick = a.Tick()
		for _, s := range []struct {
			w *World
			l *lockstep.TraceLog
		}{{a, la}, {b, lb}} {
			if s.w.Apply(cmd) == nil {
				s.l.Applied(cmd)
			}
			s.w.Step()
			s.l.Stepped(s.w)
		}
	}
	ta, tb := la.Since(0), lb.Since(0)
	if len(ta) != 5 || ta[0].Tick != 3 || ta[4].Tick != 7 {
		t.Fatalf("kept %d ticks from %d, want 5 from 3", len(ta), ta[0].Tick)
	}
	for i := range ta {
		if ta[i].NCommands != 1 || ta[i].Commands == 0 || len(ta[i].Maps) != 2 || !ta[i].SameState(&tb[i], 0) || !ta[i].SameState(&tb[i], 1) {
			t.Fatalf("tick %d: %+v vs %+v", ta[i].Tick, ta[i], tb[i])
		}
	}
	b.maps[1].Pawns[0].Hunger++
	b.Step()
	lb.Stepped(b)
	a.Step()
	la.Stepped(a)
	ta, tb = la.Since(8), lb.Since(8)
	if !ta[0].SameState(&tb[0], 0) || ta[0].SameState(&tb[0], 1) {
		t.Fatal("a changed pawn on map 1 should change map 1's trace alone")
	}
	ha, _ := ta[0].Map(1)
	hb, _ := tb[0].Map(1)
	ds, err := a.DiffTrace(1, ha, hb)
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("map 1 / pawn %d / hunger", b.maps[1].Pawns[0].ID)
	if len(ds) != 1 || ds[0].Path != want {
		t.Fatalf("differences %+v, want one at %s", ds, want)
	}
}

// TestTraceHoldsPawns checks that a map's trace reads back as the pawns'
// traced fields, and that DiffTrace gives a changed field's two values.
func TestTraceHoldsPawns(t *testing.T) {
	w := mustNew(t, testContent(t), smallConfig(9))
	for range 200 {
		w.Step()
	}
	m := w.maps[0]
	tr, err := parseTrace(w.AppendTrace(0, nil))
	if err != nil {
		t.Fatal(err)
	}
	if tr.rng != m.RNG.s || tr.nextID != m.NextID || int(tr.things) != len(m.Things) || len(tr.pawns) != len(m.Pawns) {
		t.Fatalf("map header %+v", tr)
	}
	moving := 0
	for i, q := range tr.pawns {
		p := &m.Pawns[i]
		if q.ID != p.ID || q.Hunger != p.Hunger || q.X != p.X || q.Y != p.Y || q.Cool != p.Cool || q.MoveCool != p.MoveCool {
			t.Errorf("pawn %d traced as %+v", p.ID, q)
		}
		if p.MoveCool > 0 {
			moving++
		}
	}
	if moving == 0 {
		t.Fatal("no pawn walks: the test shows nothing of the move cool-downs")
	}
	before := w.AppendTrace(0, nil)
	p := &m.Pawns[3]
	p.Y, p.MoveCool = p.Y+1, p.MoveCool+7
	ds, err := w.DiffTrace(0, before, w.AppendTrace(0, nil))
	if err != nil {
		t.Fatal(err)
	}
	want := []lockstep.Difference{
		{Path: fmt.Sprintf("map 0 / pawn %d / y", p.ID), Host: fmt.Sprint(p.Y - 1), Player: fmt.Sprint(p.Y)},
		{Path: fmt.Sprintf("map 0 / pawn %d / move cool", p.ID), Host: fmt.Sprint(p.MoveCool - 7), Player: fmt.Sprint(p.MoveCool)},
	}
	if !slices.Equal(ds, want) {
		t.Errorf("differences %v, want %v", ds, want)
	}
}
