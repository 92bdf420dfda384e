package defs

import (
	"slices"
	"strings"
)

// The attributes by which a def or a list item names the mods it needs.
const (
	attrMayRequire      = "MayRequire"
	attrMayRequireAnyOf = "MayRequireAnyOf"
)

// steamSuffix is what the game appends to the package ID of a Steam copy
// of a mod that is also installed locally; it matches MayRequire without
// it.
const steamSuffix = "_steam"

// gate is what a MayRequire/MayRequireAnyOf check decides.
type gate uint8

const (
	gateLoad    gate = iota // every condition holds (or there is none)
	gateSkip                // a condition fails: the game does not load it
	gateUnknown             // no condition fails, but one names a mod whose state is unknown
)

// activeSet answers whether a mod is active in the game: the scanned mods
// and Options.Active are; any other mod is inactive when
// Options.ActiveComplete is set, else unknown.
type activeSet struct {
	ids      map[string]bool // normalised package IDs
	inactive map[string]bool // Options.Inactive, trimmed and lower-cased
	complete bool
}

// modKey normalises a package ID as the game compares them: trimmed, in
// lower case, without a trailing "_steam".
func modKey(id string) string {
	return strings.TrimSuffix(strings.ToLower(strings.TrimSpace(id)), steamSuffix)
}

func newActiveSet(mods []Mod, opts Options) *activeSet {
	a := &activeSet{ids: map[string]bool{}, inactive: map[string]bool{}, complete: opts.ActiveComplete}
	for _, id := range opts.Inactive {
		a.inactive[strings.ToLower(strings.TrimSpace(id))] = true
	}
	for _, m := range mods {
		a.ids[modKey(m.PackageID)] = true
	}
	for _, id := range opts.Active {
		if k := modKey(id); k != "" {
			a.ids[k] = true
		}
	}
	return a
}

// isActive reports whether id is known to be active (for LoadFolders.xml's
// IfModActive, which treats an unknown mod as inactive).
func (a *activeSet) isActive(id string) bool { return a.ids[modKey(id)] }

// state returns gateLoad for an active mod, gateSkip for an inactive one
// and gateUnknown when that cannot be told. An empty ID names no mod. As
// in the game, the ID asked for is trimmed and lower-cased but keeps any
// "_steam": only the active mods' IDs lose theirs.
func (a *activeSet) state(id string) gate {
	k := strings.ToLower(strings.TrimSpace(id))
	switch {
	case k == "":
		return gateSkip
	case a.ids[k]:
		return gateLoad
	case a.complete, a.inactive[k]:
		return gateSkip
	}
	return gateUnknown
}

// check applies the MayRequire and MayRequireAnyOf attributes among attrs,
// as the game does for a def (item false) or a list item (item true):
// MayRequire is a comma-separated list of package IDs that must all be
// active, MayRequireAnyOf one of which must be. On a def an empty value
// names no mod, so it fails; on a list item it is no condition. The
// package IDs whose state is unknown are added to unknown.
func (a *activeSet) check(attrs []Attr, item bool, unknown map[string]bool) gate {
	res := gateLoad
	var unk []string
	for _, at := range attrs {
		if at.Name != attrMayRequire && at.Name != attrMayRequireAnyOf {
			continue
		}
		if item && at.Value == "" {
			continue
		}
		all := at.Name == attrMayRequire
		r := gateSkip
		if all {
			r = gateLoad
		}
		var u []string
		for _, id := range strings.Split(at.Value, ",") {
			switch st := a.state(id); {
			case st == gateUnknown:
				u = append(u, strings.ToLower(strings.TrimSpace(id)))
			case all && st == gateSkip:
				r = gateSkip
			case !all && st == gateLoad:
				r = gateLoad
			}
		}
		if len(u) > 0 && (all && r == gateLoad || !all && r == gateSkip) {
			r = gateUnknown
		}
		switch {
		case r == gateSkip:
			return gateSkip
		case r == gateUnknown:
			res = gateUnknown
			unk = append(unk, u...)
		}
	}
	if res == gateUnknown {
		for _, id := range unk {
			unknown[id] = true
		}
	}
	return res
}

// registers applies a named def element's own MayRequire as the game
// does before registering it as a possible parent: a parent whose
// MayRequire is not met is not registered, so no def inherits from it.
// MayRequireAnyOf is not looked at there. For gateUnknown it returns the
// package IDs whose state is unknown, sorted.
func (a *activeSet) registers(attrs []Attr) (gate, []string) {
	i := slices.IndexFunc(attrs, func(at Attr) bool { return at.Name == attrMayRequire })
	if i < 0 {
		return gateLoad, nil
	}
	unknown := map[string]bool{}
	g := a.check(attrs[i:i+1], false, unknown)
	if g != gateUnknown {
		return g, nil
	}
	ids := make([]string, 0, len(unknown))
	for id := range unknown {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return g, ids
}

// hasGate reports whether attrs hold MayRequire or MayRequireAnyOf.
func hasGate(attrs []Attr) bool {
	return slices.ContainsFunc(attrs, func(a Attr) bool { return a.Name == attrMayRequire || a.Name == attrMayRequireAnyOf })
}

// withoutGate returns n without its MayRequire and MayRequireAnyOf
// attributes (n itself when it has none): once applied, they do not
// change what the game loads.
func withoutGate(n *Node) *Node {
	if !hasGate(n.Attrs) {
		return n
	}
	out := *n
	out.Attrs = slices.DeleteFunc(slices.Clone(n.Attrs), func(a Attr) bool { return a.Name == attrMayRequire || a.Name == attrMayRequireAnyOf })
	if len(out.Attrs) == 0 {
		out.Attrs = nil
	}
	return &out
}

// applyItems drops, at any depth under n, the list items (<li>) whose
// MayRequire/MayRequireAnyOf fails, and removes those attributes from the
// items that pass. An item whose condition is unknown is kept as written.
// n is not modified; unchanged subtrees are shared. It returns the number
// of items dropped.
func (a *activeSet) applyItems(n *Node, unknown map[string]bool) (*Node, int) {
	var out []*Node // nil until a child changes
	dropped := 0
	for i, c := range n.Children {
		nc := c
		if c.Name == "li" && hasGate(c.Attrs) {
			switch a.check(c.Attrs, true, unknown) {
			case gateSkip:
				nc = nil
			case gateLoad:
				nc = withoutGate(c)
			}
		}
		if nc != nil {
			var d int
			nc, d = a.applyItems(nc, unknown)
			dropped += d
		} else {
			dropped++
		}
		if nc != c && out == nil {
			out = make([]*Node, i, len(n.Children))
			copy(out, n.Children[:i])
		}
		if out != nil && nc != nil {
			out = append(out, nc)
		}
	}
	if out == nil {
		return n, dropped
	}
	cp := *n
	cp.Children = out
	return &cp, dropped
}
