package desync

import (
	"slices"
	"testing"
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
	e.Exact, e.Kind, e.Differences, e.Omitted = false, "", nil, 0
	if got := e.Lines(); len(got) != 1 || got[0] != "first differing tick: 137 at the latest (between 120 and 137: the per-tick trace does not cover what differs)" {
		t.Errorf("inexact: %q", got)
	}
	for _, k := range []string{KindCommand, KindSimulation, KindOutside} {
		if KindText(k) == KindText("") {
			t.Errorf("kind %s has no text", k)
		}
	}
}
