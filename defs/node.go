package defs

import (
	"strconv"
	"strings"
)

// Attr is one XML attribute of a Node.
type Attr struct{ Name, Value string }

// Node is one XML element of a def after inheritance is resolved.
//
// Nodes returned by this package are shared between defs (a child def
// reuses the subtrees it inherits unchanged), so they must be treated as
// read-only.
type Node struct {
	Name     string
	Attrs    []Attr // sorted by Name
	Text     string // trimmed character data
	Children []*Node
	Line     int

	// noInherit records Inherit="False" on this element (the attribute
	// itself is removed while parsing).
	noInherit bool
}

// Child returns the first child element with the given name, or nil if
// there is none. It is safe to call on a nil Node.
func (n *Node) Child(name string) *Node {
	if n == nil {
		return nil
	}
	for _, c := range n.Children {
		if c.Name == name {
			return c
		}
	}
	return nil
}

// Value returns the trimmed text of the first child element with the given
// name, and whether such a child exists.
func (n *Node) Value(name string) (string, bool) {
	c := n.Child(name)
	if c == nil {
		return "", false
	}
	return c.Text, true
}

// Int returns the text of the named child parsed as a base-10 integer, or
// def if the child is missing or its text is not an integer.
func (n *Node) Int(name string, def int) int {
	v, ok := n.Value(name)
	if !ok {
		return def
	}
	i, err := strconv.Atoi(v)
	if err != nil {
		return def
	}
	return i
}

// Attr returns the value of the named attribute and whether it is present.
func (n *Node) Attr(name string) (string, bool) {
	if n == nil {
		return "", false
	}
	for _, a := range n.Attrs {
		if a.Name == name {
			return a.Value, true
		}
	}
	return "", false
}

// String renders the node as indented XML-like text, for diagnostics.
func (n *Node) String() string {
	var b strings.Builder
	n.write(&b, 0)
	return b.String()
}

func (n *Node) write(b *strings.Builder, depth int) {
	if n == nil {
		return
	}
	b.WriteString(strings.Repeat("  ", depth))
	b.WriteByte('<')
	b.WriteString(n.Name)
	for _, a := range n.Attrs {
		b.WriteByte(' ')
		b.WriteString(a.Name)
		b.WriteString(`="`)
		b.WriteString(escapeText(a.Value))
		b.WriteByte('"')
	}
	if n.Text == "" && len(n.Children) == 0 {
		b.WriteString("/>\n")
		return
	}
	b.WriteByte('>')
	b.WriteString(escapeText(n.Text))
	if len(n.Children) > 0 {
		b.WriteByte('\n')
		for _, c := range n.Children {
			c.write(b, depth+1)
		}
		b.WriteString(strings.Repeat("  ", depth))
	}
	b.WriteString("</")
	b.WriteString(n.Name)
	b.WriteString(">\n")
}

var textEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;")

func escapeText(s string) string { return textEscaper.Replace(s) }
