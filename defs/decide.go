package defs

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
)

// MaxDecideMods bounds the number of undecided mods DecideDiff tries both
// ways: it compares the sides 2^n times.
const MaxDecideMods = 3

// Case is one comparison of a decided report: the sides compared with the
// undecided mods Active counted active and Inactive counted inactive.
type Case struct {
	Active   []string `json:"active"`
	Inactive []string `json:"inactive"`
	Report   *Report  `json:"report"`
}

// undecidedMods returns the package IDs the report's undecided defs
// depend on, on either side, sorted.
func (r *Report) undecidedMods() []string {
	var out []string
	for _, list := range [][]UndecidedDef{r.UndecidedA, r.UndecidedB} {
		for _, u := range list {
			for _, id := range u.Mods {
				if !slices.Contains(out, id) {
					out = append(out, id)
				}
			}
		}
	}
	slices.Sort(out)
	return out
}

// DecideDiff answers what report r left undecided when the answer does not
// turn on the mods it could not decide. r compared two sides some of whose
// defs depend (MayRequire) on mods neither scanned nor declared; diff
// compares the same sides again with the given mods declared active and
// inactive (Options.Active and Options.Inactive on both sides). For at
// most MaxDecideMods such mods, DecideDiff compares the sides once for
// each combination of them being active or not and returns a report made
// of those cases: the sides are the same if they are in every case, differ
// if they differ in every case, and otherwise DependsOn names the mods the
// answer turns on. With no undecided mod, or too many, it returns r.
func DecideDiff(r *Report, diff func(active, inactive []string) (*Report, error)) (*Report, error) {
	mods := r.undecidedMods()
	if len(mods) == 0 || len(mods) > MaxDecideMods {
		return r, nil
	}
	out := &Report{GameVersionA: r.GameVersionA, GameVersionB: r.GameVersionB}
	same := 0
	// Every mod active first, none active last.
	for mask := 1<<len(mods) - 1; mask >= 0; mask-- {
		on, off := []string{}, []string{}
		for i, id := range mods {
			if mask&(1<<i) != 0 {
				on = append(on, id)
			} else {
				off = append(off, id)
			}
		}
		cr, err := diff(on, off)
		if err != nil {
			return nil, fmt.Errorf("comparing with %s: %w", caseText(on, off), err)
		}
		if cr.Same() {
			same++
		}
		out.Cases = append(out.Cases, Case{Active: on, Inactive: off, Report: cr})
	}
	if same > 0 && same < len(out.Cases) {
		out.DependsOn = mods
	}
	return out, nil
}

// caseText says "X is active", "X is not active", "X is active and Y is
// not"…
func caseText(on, off []string) string {
	var parts []string
	if len(on) > 0 {
		parts = append(parts, strings.Join(on, " and ")+" "+isAre(len(on))+" active")
	}
	if len(off) > 0 {
		neg := " not active"
		if len(on) > 0 {
			neg = " not"
		}
		parts = append(parts, strings.Join(off, " and ")+" "+isAre(len(off))+neg)
	}
	return strings.Join(parts, " and ")
}

func isAre(n int) string {
	if n == 1 {
		return "is"
	}
	return "are"
}

// writeCases writes a decided report: what the cases say together, then
// each case's own report, indented.
func (r *Report) writeCases(ew *errWriter, aLabel, bLabel string) {
	mods := slices.Concat(r.Cases[0].Active, r.Cases[0].Inactive)
	slices.Sort(mods)
	list := strings.Join(mods, ", ")
	switch {
	case len(r.DependsOn) > 0:
		ew.printf("Whether %s and %s differ depends on %s, neither scanned nor declared active or inactive (MayRequire); declare the active DLCs and mods (defs --active, or --mods-config) to compare what the game would load:\n", aLabel, bLabel, list)
	case r.Same():
		ew.printf("%s and %s load the same defs whether or not %s is active (MayRequire; neither scanned nor declared):\n", aLabel, bLabel, list)
	default:
		ew.printf("%s and %s differ whether or not %s is active (MayRequire; neither scanned nor declared):\n", aLabel, bLabel, list)
	}
	for _, c := range r.Cases {
		ew.printf("If %s:\n", caseText(c.Active, c.Inactive))
		var b bytes.Buffer
		c.Report.WriteText(&b, aLabel, bLabel)
		for _, line := range strings.SplitAfter(b.String(), "\n") {
			if line != "" {
				ew.printf("  %s", line)
			}
		}
	}
}
