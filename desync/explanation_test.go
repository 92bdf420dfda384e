package desync

import (
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestExplanationLines(t *testing.T) {
	e := &Explanation{From: 120, FirstTick: 137, Exact: true, Kind: KindSimulation, Differences: []Difference{
		{Path: "map 0 / pawn 615 / x", Host: "12", Player: "13"},
		{Path: "map 2 / thing 10644 (Steel) / count", Host: "31", Player: "32"},
	}, Omitted: 4}
	want := []string{
		"first differing tick: 137",
		"kind: simulation: " + KindText(KindSimulation),
		"differs: map 0 / pawn 615 / x: 12 vs 13",
		"differs: map 2 / thing 10644 (Steel) / count: 31 vs 32",
		"differs: 4 more",
	}
	if got := e.Lines(); !slices.Equal(got, want) {
		t.Errorf("lines\n%q\nwant\n%q", got, want)
	}
	if got, want := e.Summary(), "tick 137: map 0 / pawn 615 / x: 12 vs 13 (and 5 more)"; got != want {
		t.Errorf("summary %q, want %q", got, want)
	}
	e.Exact, e.Kind, e.Differences, e.Omitted = false, "", nil, 0
	if got := e.Summary(); got != "by tick 137" {
		t.Errorf("summary %q", got)
	}
	if got := e.Lines(); len(got) != 1 || got[0] != "first differing tick: 137 at the latest (between 120 and 137: the per-tick trace does not cover what differs)" {
		t.Errorf("inexact: %q", got)
	}
	for _, k := range []string{KindCommand, KindSimulation, KindOutside} {
		if KindText(k) == KindText("") {
			t.Errorf("kind %s has no text", k)
		}
	}
}

func TestExplanationRoundTrip(t *testing.T) {
	dir := t.TempDir()
	in := sample(time.Date(2025, 3, 1, 10, 0, 0, 0, time.UTC), 300, 2)
	in.Explanation = &Explanation{From: 240, FirstTick: 250, Exact: true, Kind: KindCommand, Differences: []Difference{
		{Path: "tick 250 / command 0 (map 0, kind 1, player 1)", Host: "applied once", Player: "applied twice"},
	}, Omitted: 2}
	path, err := Write(dir, in)
	if err != nil {
		t.Fatal(err)
	}
	out, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(out.Explanation, in.Explanation) {
		t.Errorf("explanation %+v, want %+v", out.Explanation, in.Explanation)
	}
	// A report of before explanations still reads, with none.
	in.Explanation = nil
	if path, err = Write(dir, in); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "explanation") {
		t.Error("a report without an explanation names one")
	}
	if out, err = Read(path); err != nil || out.Explanation != nil {
		t.Errorf("read %v, %v", out.Explanation, err)
	}
}
