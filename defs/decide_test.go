package defs

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// crates is a mod whose Crates.xml holds the given Crate defs in order.
func crates(defs ...string) ModSource {
	return mod("test.crates", map[string]string{"Defs/Crates.xml": defsXML(strings.Join(defs, "\n"))})
}

func crate(gate, label string) string {
	return `<ThingDef` + gate + `><defName>Crate</defName><label>` + label + `</label></ThingDef>`
}

const royalGate = ` MayRequire="Ludeon.RimWorld.Royalty"`

// decide compares a and b as "defs diff" does for two content sides.
func decide(t *testing.T, a, b ModSource) (*Report, int) {
	t.Helper()
	calls := 0
	r, err := DecideDiff(DiffSets(scan(t, Options{}, a), scan(t, Options{}, b)), func(on, off []string) (*Report, error) {
		calls++
		opts := Options{Active: on, Inactive: off}
		return DiffSets(scan(t, opts, a), scan(t, opts, b)), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return r, calls
}

// TestDecideDiff checks that a diff is undecided only when its answer
// turns on a mod nobody declared. Within one mod the game drops a def
// whose MayRequire is not met before it keeps the first of two defs of a
// name: a gated Crate before a plain one wins when its mod is active and
// is dropped when not, while a plain Crate before a gated one always wins.
func TestDecideDiff(t *testing.T) {
	// Gated first, the same on both sides; the plain ones differ: the
	// sides differ only without Royalty.
	r, calls := decide(t, crates(crate(royalGate, "royal"), crate("", "a")), crates(crate(royalGate, "royal"), crate("", "b")))
	if calls != 2 || !slices.Equal(r.DependsOn, []string{"ludeon.rimworld.royalty"}) || r.Complete() {
		t.Fatalf("gated first: calls %d, DependsOn %v, complete %v", calls, r.DependsOn, r.Complete())
	}
	if !r.Cases[0].Report.Same() || !slices.Equal(r.Cases[0].Active, []string{"ludeon.rimworld.royalty"}) {
		t.Errorf("with Royalty the first (gated, equal) Crates are kept: %+v", r.Cases[0])
	}
	if c := r.Cases[1].Report; c.Same() || len(c.Databases) != 1 || len(c.Databases[0].Changed) != 1 || c.Databases[0].Changed[0].Path != "label" {
		t.Errorf("without Royalty the plain Crates differ at label: %+v", c)
	}
	// Gated and plain both differ: different whatever Royalty is.
	r, _ = decide(t, crates(crate(royalGate, "royal a"), crate("", "a")), crates(crate(royalGate, "royal b"), crate("", "b")))
	if r.Same() || len(r.DependsOn) != 0 || !r.Complete() {
		t.Errorf("both differ: same %v, DependsOn %v, complete %v", r.Same(), r.DependsOn, r.Complete())
	}
	// The same on both sides: the same whatever Royalty is.
	r, _ = decide(t, crates(crate(royalGate, "royal"), crate("", "a")), crates(crate(royalGate, "royal"), crate("", "a")))
	if !r.Same() || !r.Complete() {
		t.Errorf("same sides: same %v, complete %v", r.Same(), r.Complete())
	}
	// Plain first: it always wins, nothing is undecided, nothing to try.
	r, calls = decide(t, crates(crate("", "a"), crate(royalGate, "royal")), crates(crate("", "b"), crate(royalGate, "royal")))
	if calls != 0 || len(r.Cases) != 0 || r.Same() || len(r.UndecidedA) != 0 {
		t.Errorf("plain first: calls %d, cases %d, same %v, undecided %v", calls, len(r.Cases), r.Same(), r.UndecidedA)
	}
	// More undecided mods than MaxDecideMods: left undecided.
	var distinct []string
	for i := 0; i <= MaxDecideMods; i++ {
		distinct = append(distinct, fmt.Sprintf(`<ThingDef MayRequire="test.dlc%d"><defName>C%d</defName></ThingDef>`, i, i))
	}
	mm := mod("test.many", map[string]string{"Defs/A.xml": defsXML(strings.Join(distinct, "\n"))})
	r, calls = decide(t, mm, mm)
	if calls != 0 || len(r.Cases) != 0 || r.Complete() {
		t.Errorf("%d undecided mods: calls %d, cases %d, complete %v", MaxDecideMods+1, calls, len(r.Cases), r.Complete())
	}
}
