package defs

import (
	"fmt"
	"io"
	"slices"
	"strings"
)

// Report is the exact difference between two manifests, A and B.
type Report struct {
	GameVersionA string `json:"gameVersionA"`
	GameVersionB string `json:"gameVersionB"`

	ModsOnlyA []ManifestMod `json:"modsOnlyA,omitempty"` // in A, not in B
	ModsOnlyB []ManifestMod `json:"modsOnlyB,omitempty"` // in B, not in A
	// ModsChanged lists mods present on both sides whose name or version
	// differs.
	ModsChanged []ModChange `json:"modsChanged,omitempty"`
	// OrderA and OrderB are set when the mods present on both sides are
	// loaded in a different order: they hold those mods' package IDs in
	// each side's order.
	OrderA []string `json:"orderA,omitempty"`
	OrderB []string `json:"orderB,omitempty"`

	Databases []DatabaseDiff `json:"databases,omitempty"` // differing databases, sorted by Type

	// What each side could not compare: defs whose parent was not in the
	// scan (compared by their own XML only) and the number of scan errors
	// (defs or files not read at all).
	UnresolvedA []UnresolvedDef `json:"unresolvedA,omitempty"`
	UnresolvedB []UnresolvedDef `json:"unresolvedB,omitempty"`
	// UndecidedA and UndecidedB list the defs that depend, through a
	// MayRequire of theirs or of a list item, on a mod whose state was not
	// known on that side: whether the game loads them is not known.
	UndecidedA  []UndecidedDef `json:"undecidedA,omitempty"`
	UndecidedB  []UndecidedDef `json:"undecidedB,omitempty"`
	ScanErrorsA int            `json:"scanErrorsA,omitempty"`
	ScanErrorsB int            `json:"scanErrorsB,omitempty"`

	// Cases is set by DecideDiff: the comparisons of the sides under each
	// combination of the undecided mods being active or not. The other
	// fields are then empty: each case has its own report.
	Cases []Case `json:"cases,omitempty"`
	// DependsOn names the undecided mods when the cases do not agree:
	// whether the sides differ turns on them.
	DependsOn []string `json:"dependsOn,omitempty"`
}

// UnresolvedDef is a def whose parent is not in the scanned content.
type UnresolvedDef struct {
	Type   string `json:"type"`
	Name   string `json:"name"`
	Mod    string `json:"mod"`
	Parent string `json:"parent"` // the missing parent's Name
}

// UndecidedDef is a def whose loading depends on mods whose state was not
// known.
type UndecidedDef struct {
	Type string   `json:"type"`
	Name string   `json:"name"`
	Mod  string   `json:"mod"`
	Mods []string `json:"mods"` // the package IDs whose state is unknown
}

// ModChange is a mod whose metadata differs between the sides.
type ModChange struct {
	A ManifestMod `json:"a"`
	B ManifestMod `json:"b"`
}

// DatabaseDiff is one database that differs.
type DatabaseDiff struct {
	Type   string `json:"type"`
	InA    bool   `json:"inA"`
	InB    bool   `json:"inB"`
	CountA int    `json:"countA"`
	CountB int    `json:"countB"`
	HashA  Hash64 `json:"hashA"`
	HashB  Hash64 `json:"hashB"`
	// NoDetail is set when a side lists no defs for the database (a
	// summary-only manifest), so the defs below may be incomplete.
	NoDetail bool          `json:"noDetail,omitempty"`
	OnlyA    []ManifestDef `json:"onlyA,omitempty"`   // defs only in A
	OnlyB    []ManifestDef `json:"onlyB,omitempty"`   // defs only in B
	Changed  []DefChange   `json:"changed,omitempty"` // same name, different content
}

// DefChange is a def present on both sides with different content.
type DefChange struct {
	Name  string `json:"name"`
	ModA  string `json:"modA"`
	ModB  string `json:"modB"`
	HashA Hash64 `json:"hashA"`
	HashB Hash64 `json:"hashB"`
	// UnresolvedA and UnresolvedB name the def's missing parent on that
	// side, when it has one: its content was compared by its own XML.
	UnresolvedA string `json:"unresolvedA,omitempty"`
	UnresolvedB string `json:"unresolvedB,omitempty"`
	// FileA and FileB are the files the def comes from on each side,
	// relative to its mod (empty when a manifest does not say).
	FileA string `json:"fileA,omitempty"`
	FileB string `json:"fileB,omitempty"`
	// Path is the first element, in document order, where the two defs
	// differ, such as "statBases/MaxHitPoints" or "comps/li[2]"; "" is the
	// def element itself (its attributes or text). Known when both sides
	// were scanned (see DiffSets) or both list the def's Elements;
	// PathKnown says whether it was.
	Path      string `json:"path,omitempty"`
	PathKnown bool   `json:"pathKnown,omitempty"`
}

// Same reports whether no difference was found: same game version, same
// mods in the same order with the same metadata, same databases. Content
// that could not be compared is not a difference; see Complete.
func (r *Report) Same() bool {
	if len(r.Cases) > 0 {
		return !slices.ContainsFunc(r.Cases, func(c Case) bool { return !c.Report.Same() })
	}
	return r.GameVersionA == r.GameVersionB && len(r.ModsOnlyA) == 0 && len(r.ModsOnlyB) == 0 &&
		len(r.ModsChanged) == 0 && len(r.OrderA) == 0 && len(r.Databases) == 0
}

// Complete reports whether both sides were read completely: no scan
// errors, no def with an unresolved parent and none whose loading depends
// on a mod whose state was not known. Only a report that is Same and
// Complete says that the game would load the same defs on both sides. A
// decided report (see DecideDiff) is complete when every case is and the
// answer does not depend on the undecided mods.
func (r *Report) Complete() bool {
	if len(r.Cases) > 0 {
		return len(r.DependsOn) == 0 && !slices.ContainsFunc(r.Cases, func(c Case) bool { return !c.Report.Complete() })
	}
	return r.ScanErrorsA == 0 && r.ScanErrorsB == 0 && len(r.UnresolvedA) == 0 && len(r.UnresolvedB) == 0 &&
		len(r.UndecidedA) == 0 && len(r.UndecidedB) == 0
}

// Diff compares two manifests exactly.
func Diff(a, b *Manifest) *Report {
	r := &Report{GameVersionA: a.GameVersion, GameVersionB: b.GameVersion,
		UnresolvedA: a.Unresolved(), UnresolvedB: b.Unresolved(), ScanErrorsA: a.ScanErrors, ScanErrorsB: b.ScanErrors,
		UndecidedA: a.Undecided(), UndecidedB: b.Undecided()}

	inB := map[string]ManifestMod{}
	for _, m := range b.Mods {
		inB[strings.ToLower(m.PackageID)] = m
	}
	inA := map[string]bool{}
	var commonA, commonB []string
	for _, m := range a.Mods {
		id := strings.ToLower(m.PackageID)
		inA[id] = true
		bm, ok := inB[id]
		if !ok {
			r.ModsOnlyA = append(r.ModsOnlyA, m)
			continue
		}
		commonA = append(commonA, m.PackageID)
		if m.Name != bm.Name || m.Version != bm.Version {
			r.ModsChanged = append(r.ModsChanged, ModChange{A: m, B: bm})
		}
	}
	for _, m := range b.Mods {
		if !inA[strings.ToLower(m.PackageID)] {
			r.ModsOnlyB = append(r.ModsOnlyB, m)
		} else {
			commonB = append(commonB, m.PackageID)
		}
	}
	for i := range commonA {
		if !strings.EqualFold(commonA[i], commonB[i]) {
			r.OrderA, r.OrderB = commonA, commonB
			break
		}
	}

	i, j := 0, 0
	for i < len(a.Databases) || j < len(b.Databases) {
		switch {
		case j >= len(b.Databases) || i < len(a.Databases) && a.Databases[i].Type < b.Databases[j].Type:
			da := &a.Databases[i]
			r.Databases = append(r.Databases, diffDB(da, nil))
			i++
		case i >= len(a.Databases) || b.Databases[j].Type < a.Databases[i].Type:
			db := &b.Databases[j]
			r.Databases = append(r.Databases, diffDB(nil, db))
			j++
		default:
			da, db := &a.Databases[i], &b.Databases[j]
			if da.Count != db.Count || da.Hash != db.Hash {
				r.Databases = append(r.Databases, diffDB(da, db))
			}
			i++
			j++
		}
	}
	return r
}

func diffDB(a, b *ManifestDatabase) DatabaseDiff {
	d := DatabaseDiff{InA: a != nil, InB: b != nil}
	var da, db []ManifestDef
	if a != nil {
		d.Type, d.CountA, d.HashA, da = a.Type, a.Count, a.Hash, a.Defs
		if len(a.Defs) == 0 && a.Count > 0 {
			d.NoDetail = true
		}
	}
	if b != nil {
		d.Type, d.CountB, d.HashB, db = b.Type, b.Count, b.Hash, b.Defs
		if len(b.Defs) == 0 && b.Count > 0 {
			d.NoDetail = true
		}
	}
	i, j := 0, 0
	for i < len(da) || j < len(db) {
		switch {
		case j >= len(db) || i < len(da) && da[i].Name < db[j].Name:
			d.OnlyA = append(d.OnlyA, da[i])
			i++
		case i >= len(da) || db[j].Name < da[i].Name:
			d.OnlyB = append(d.OnlyB, db[j])
			j++
		default:
			if da[i].Hash != db[j].Hash {
				c := DefChange{Name: da[i].Name, ModA: da[i].Mod, ModB: db[j].Mod, HashA: da[i].Hash, HashB: db[j].Hash,
					UnresolvedA: da[i].UnresolvedParent, UnresolvedB: db[j].UnresolvedParent, FileA: da[i].File, FileB: db[j].File}
				c.Path, c.PathKnown = FirstDifferenceElements(da[i].Elements, db[j].Elements)
				d.Changed = append(d.Changed, c)
			}
			i++
			j++
		}
	}
	return d
}

// WriteText writes a human-readable report, calling the sides aLabel and
// bLabel. Write errors are ignored (the first one stops the output).
func (r *Report) WriteText(w io.Writer, aLabel, bLabel string) {
	ew := &errWriter{w: w}
	if len(r.Cases) > 0 {
		r.writeCases(ew, aLabel, bLabel)
		return
	}
	defer r.writeIncomplete(ew, aLabel, bLabel)
	if r.Same() {
		if r.Complete() {
			ew.printf("%s and %s have the same mods and def databases.\n", aLabel, bLabel)
		} else {
			ew.printf("No difference found between %s and %s, but not everything could be compared.\n", aLabel, bLabel)
		}
		return
	}
	if r.GameVersionA != r.GameVersionB {
		ew.printf("Game version: %s has %q, %s has %q.\n", aLabel, r.GameVersionA, bLabel, r.GameVersionB)
	}
	for _, m := range r.ModsOnlyA {
		ew.printf("Mod %s is only in %s.\n", modText(m), aLabel)
	}
	for _, m := range r.ModsOnlyB {
		ew.printf("Mod %s is only in %s.\n", modText(m), bLabel)
	}
	for _, c := range r.ModsChanged {
		ew.printf("Mod %s differs: %s has %s, %s has %s.\n", c.A.PackageID, aLabel, modText(c.A), bLabel, modText(c.B))
	}
	if len(r.OrderA) > 0 {
		ew.printf("Mods are loaded in a different order:\n  %s: %s\n  %s: %s\n", aLabel, strings.Join(r.OrderA, ", "), bLabel, strings.Join(r.OrderB, ", "))
	}
	for _, d := range r.Databases {
		switch {
		case !d.InB:
			ew.printf("Database %s (%s) is only in %s.\n", d.Type, nDefs(d.CountA), aLabel)
		case !d.InA:
			ew.printf("Database %s (%s) is only in %s.\n", d.Type, nDefs(d.CountB), bLabel)
		default:
			ew.printf("Database %s differs: %s has %s (hash %s), %s has %s (hash %s).\n", d.Type, aLabel, nDefs(d.CountA), d.HashA, bLabel, nDefs(d.CountB), d.HashB)
		}
		if d.NoDetail {
			ew.printf("  (one side lists no defs for %s; details are incomplete)\n", d.Type)
		}
		for _, x := range d.OnlyA {
			ew.printf("  %s %s (%s) is only in %s.\n", d.Type, x.Name, from(x.Mod, x.File), aLabel)
		}
		for _, x := range d.OnlyB {
			ew.printf("  %s %s (%s) is only in %s.\n", d.Type, x.Name, from(x.Mod, x.File), bLabel)
		}
		for _, x := range d.Changed {
			note := ""
			switch pa, pb := x.UnresolvedA, x.UnresolvedB; {
			case pa != "" && pb != "" && pa != pb:
				note = fmt.Sprintf(" (its parent, not in the scan: %q in %s, %q in %s)", pa, aLabel, pb, bLabel)
			case pa != "" && pb != "":
				note = fmt.Sprintf(" (its parent %q is not in the scan; compared by its own XML)", pa)
			case pa != "":
				note = fmt.Sprintf(" (in %s its parent %q is not in the scan)", aLabel, pa)
			case pb != "":
				note = fmt.Sprintf(" (in %s its parent %q is not in the scan)", bLabel, pb)
			}
			if x.PathKnown {
				if x.Path == "" {
					note += ", first in the def element's own attributes or text"
				} else {
					note += ", first at " + x.Path
				}
			}
			if x.ModA == x.ModB && x.FileA == x.FileB {
				ew.printf("  %s %s (%s) has different content%s.\n", d.Type, x.Name, from(x.ModA, x.FileA), note)
			} else {
				ew.printf("  %s %s has different content%s: in %s from %s; in %s from %s.\n", d.Type, x.Name, note, aLabel, from(x.ModA, x.FileA), bLabel, from(x.ModB, x.FileB))
			}
		}
	}
}

// maxUnresolvedListed bounds the unresolved defs WriteText names per side.
const maxUnresolvedListed = 20

// writeIncomplete says what each side could not compare.
func (r *Report) writeIncomplete(ew *errWriter, aLabel, bLabel string) {
	side := func(label string, errs int, un []UnresolvedDef, ud []UndecidedDef) {
		if len(ud) > 0 {
			ew.printf("%s has %s whose loading depends on mods that were neither scanned nor declared active or inactive (MayRequire); declare the active DLCs and mods (defs --active, or --mods-config) to compare what the game would load:\n", label, nDefs(len(ud)))
			for i, u := range ud {
				if i == maxUnresolvedListed {
					ew.printf("  … and %d more (--json lists them all)\n", len(ud)-i)
					break
				}
				ew.printf("  %s %s (mod %s): needs %s\n", u.Type, u.Name, u.Mod, strings.Join(u.Mods, ", "))
			}
		}
		if errs > 0 {
			ew.printf("%s was not read completely: its scan had %d error(s); those defs or files are not compared.\n", label, errs)
		}
		if len(un) == 0 {
			return
		}
		ew.printf("%s has %s whose parent is not in the scan; compared by their own XML, not by what the game would load:\n", label, nDefs(len(un)))
		for i, u := range un {
			if i == maxUnresolvedListed {
				ew.printf("  … and %d more (--json lists them all)\n", len(un)-i)
				break
			}
			ew.printf("  %s %s (mod %s): parent %q\n", u.Type, u.Name, u.Mod, u.Parent)
		}
	}
	side(aLabel, r.ScanErrorsA, r.UnresolvedA, r.UndecidedA)
	side(bLabel, r.ScanErrorsB, r.UnresolvedB, r.UndecidedB)
}

// nDefs says "1 def" or "n defs".
func nDefs(n int) string {
	if n == 1 {
		return "1 def"
	}
	return fmt.Sprintf("%d defs", n)
}

// from names where a def comes from: "mod X, file F" (the file when
// known).
func from(mod, file string) string {
	if file == "" {
		return "mod " + mod
	}
	return "mod " + mod + ", file " + file
}

func modText(m ManifestMod) string {
	s := m.PackageID
	if m.Name != "" {
		s += " (" + m.Name
		if m.Version != "" {
			s += " " + m.Version
		}
		s += ")"
	} else if m.Version != "" {
		s += " (" + m.Version + ")"
	}
	return s
}

type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) printf(format string, args ...any) {
	if e.err == nil {
		_, e.err = fmt.Fprintf(e.w, format, args...)
	}
}
