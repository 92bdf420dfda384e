package defs

import (
	"fmt"
	"slices"
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
