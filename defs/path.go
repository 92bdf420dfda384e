package defs

import (
	"encoding/binary"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/cespare/xxhash/v2"
)

// DiffSets compares two scanned sets as Diff compares their manifests,
// and also finds, for each def whose content differs, the first element
// where it differs (DefChange.Path).
func DiffSets(a, b *Set) *Report {
	r := Diff(a.Manifest(), b.Manifest())
	for i := range r.Databases {
		d := &r.Databases[i]
		da, db := a.Database(d.Type), b.Database(d.Type)
		for j := range d.Changed {
			x := &d.Changed[j]
			na, nb := da.Def(x.Name), db.Def(x.Name)
			if na == nil || nb == nil {
				continue
			}
			x.Path, x.PathKnown = FirstDifference(na.Node, nb.Node), true
		}
	}
	return r
}

// FirstDifference returns the path of the first element, in document
// order, where resolved elements a and b differ: "" when a and b differ in
// their own name, attributes or text; otherwise the child elements'
// names joined by "/", a name repeated among its siblings numbered from 1
// ("comps/li[2]/compClass"). When one element has children the other
// lacks and the rest are the same, the path names the first such child.
// It returns "" for equal elements too; compare hashes first.
func FirstDifference(a, b *Node) string {
	path := ""
	for {
		if a.Name != b.Name || a.Text != b.Text || !slices.Equal(a.Attrs, b.Attrs) {
			return path
		}
		i := 0
		for i < len(a.Children) && i < len(b.Children) && equalNodes(a.Children[i], b.Children[i]) {
			i++
		}
		var next *Node
		switch {
		case i < len(a.Children) && i < len(b.Children):
			next = a.Children[i]
		case i < len(a.Children):
			return join(path, childLabel(a, i))
		case i < len(b.Children):
			return join(path, childLabel(b, i))
		default:
			return path
		}
		// Same child names (so the same label on both sides) unless the
		// names differ, in which case the child is the difference.
		path = join(path, childLabel(a, i))
		if next.Name != b.Children[i].Name {
			return path
		}
		a, b = next, b.Children[i]
	}
}

func join(path, label string) string {
	if path == "" {
		return label
	}
	return path + "/" + label
}

// childLabel names n's child i: its name, followed by its 1-based
// position among the children of the same name when there are several.
func childLabel(n *Node, i int) string {
	name := n.Children[i].Name
	pos, count := 0, 0
	for k, c := range n.Children {
		if c.Name == name {
			count++
			if k <= i {
				pos++
			}
		}
	}
	if count == 1 {
		return name
	}
	return fmt.Sprintf("%s[%d]", name, pos)
}

// equalNodes reports whether two resolved elements hash the same: same
// name, attributes, text and children.
func equalNodes(a, b *Node) bool {
	if a == b {
		return true
	}
	if a.Name != b.Name || a.Text != b.Text || !slices.Equal(a.Attrs, b.Attrs) || len(a.Children) != len(b.Children) {
		return false
	}
	for i := range a.Children {
		if !equalNodes(a.Children[i], b.Children[i]) {
			return false
		}
	}
	return true
}

// Elements encodes a resolved def element for ManifestDef.Elements: its
// elements in document order (the def element first), separated by ";",
// each "DEPTH NAME HASH" with DEPTH 0 for the def element and HASH the
// low 32 bits, in 8 hex digits, of XXH64 over the element's own name,
// attributes and text (not its children) in the canonical encoding.
// Two such lists locate the first element where two defs differ without
// their files; see FirstDifferenceElements.
func Elements(n *Node) string {
	var b strings.Builder
	var buf []byte
	var walk func(x *Node, depth int)
	walk = func(x *Node, depth int) {
		if b.Len() > 0 {
			b.WriteByte(';')
		}
		buf = appendStr(buf[:0], x.Name)
		buf = binary.AppendUvarint(buf, uint64(len(x.Attrs)))
		for _, a := range x.Attrs {
			buf = appendStr(buf, a.Name)
			buf = appendStr(buf, a.Value)
		}
		buf = appendStr(buf, x.Text)
		fmt.Fprintf(&b, "%d %s %08x", depth, x.Name, uint32(xxhash.Sum64(buf)))
		for _, c := range x.Children {
			walk(c, depth+1)
		}
	}
	walk(n, 0)
	return b.String()
}

// element is one entry of an Elements list.
type element struct {
	depth      int
	name, hash string
}

// maxElements bounds the entries of an Elements list that
// FirstDifferenceElements reads (a list comes from another machine); a
// longer one names no element.
const maxElements = 1 << 16

// parseElements decodes an Elements list; ok is false if it is not one.
func parseElements(s string) ([]element, bool) {
	if s == "" || strings.Count(s, ";") >= maxElements {
		return nil, false
	}
	parts := strings.Split(s, ";")
	out := make([]element, len(parts))
	for i, p := range parts {
		f := strings.Fields(p)
		if len(f) != 3 {
			return nil, false
		}
		d, err := strconv.Atoi(f[0])
		if err != nil || d < 0 || d > maxDepth || (i == 0) != (d == 0) || i > 0 && d > out[i-1].depth+1 {
			return nil, false
		}
		out[i] = element{depth: d, name: f[1], hash: f[2]}
	}
	return out, true
}

// FirstDifferenceElements is FirstDifference on two Elements lists: the
// path of the first element, in document order, where they differ, and
// false if either is not an Elements list. Hashes of 32 bits can collide,
// so a difference may in rare cases be found later than it is.
func FirstDifferenceElements(a, b string) (string, bool) {
	ea, okA := parseElements(a)
	eb, okB := parseElements(b)
	if !okA || !okB {
		return "", false
	}
	k := 0
	for k < len(ea) && k < len(eb) && ea[k] == eb[k] {
		k++
	}
	switch {
	case k < len(ea):
		return elementPath(ea, k), true
	case k < len(eb):
		return elementPath(eb, k), true
	}
	return "", true
}

// elementPath names entry k of list e as FirstDifference names elements:
// the names below the def element joined by "/", a name repeated among
// its siblings numbered from 1.
func elementPath(e []element, k int) string {
	var labels []string
	for k > 0 {
		parent := k - 1
		for e[parent].depth >= e[k].depth {
			parent--
		}
		pos, count := 0, 0
		for i := parent + 1; i < len(e) && e[i].depth > e[parent].depth; i++ {
			if e[i].depth == e[k].depth && e[i].name == e[k].name {
				count++
				if i <= k {
					pos++
				}
			}
		}
		label := e[k].name
		if count > 1 {
			label = fmt.Sprintf("%s[%d]", label, pos)
		}
		labels = append(labels, label)
		k = parent
	}
	slices.Reverse(labels)
	return strings.Join(labels, "/")
}
