package defs

import (
	"errors"
	"fmt"
	"strings"
)

// rawDef is one def element as written in a file, before inheritance.
type rawDef struct {
	Type       string // element name
	DefName    string // trimmed <defName> text as written, may be empty
	Name       string // Name attribute: this def can be a parent
	ParentName string // ParentName attribute
	Abstract   bool   // Abstract="True": a parent only, never in a database
	Line       int
	Node       *Node // content with inheritance attributes removed
}

// fileIssue is a problem found in one file, located by line.
type fileIssue struct {
	Line  int
	Msg   string
	Fatal bool // an error (the def or file is dropped), else a warning
}

// parseDefXML parses one def file; it takes ownership of data (see
// parseXML). A file that is not well-formed XML
// yields no defs and one fatal issue. (Whether a def has a defName is
// checked after inheritance, since a defName can be inherited.)
func parseDefXML(data []byte) ([]rawDef, []fileIssue) {
	root, err := parseXML(data)
	if err != nil {
		var se *syntaxError
		if errors.As(err, &se) {
			return nil, []fileIssue{{Line: se.Line, Msg: "XML syntax error: " + se.Msg, Fatal: true}}
		}
		return nil, []fileIssue{{Line: 1, Msg: err.Error(), Fatal: true}}
	}
	var issues []fileIssue
	if root.Name != "Defs" {
		issues = append(issues, fileIssue{Line: root.Line, Msg: fmt.Sprintf("root element is <%s>, expected <Defs>", root.Name)})
	}
	defs := make([]rawDef, 0, len(root.Children))
	for _, n := range root.Children {
		d := rawDef{Type: n.Name, Line: n.Line}
		kept := n.Attrs[:0:0]
		for _, a := range n.Attrs {
			switch a.Name {
			case "Name":
				d.Name = a.Value
			case "ParentName":
				d.ParentName = a.Value
			case "Abstract":
				d.Abstract = strings.EqualFold(strings.TrimSpace(a.Value), "true")
			default:
				kept = append(kept, a)
			}
		}
		n.Attrs = kept
		for _, c := range n.Children {
			stripInherit(c)
		}
		d.Node = n
		if v, ok := n.Value("defName"); ok {
			d.DefName = v
		}
		if d.Abstract && d.Name == "" {
			issues = append(issues, fileIssue{Line: n.Line, Msg: fmt.Sprintf("abstract %s has no Name attribute, so nothing can inherit from it", n.Name)})
		}
		defs = append(defs, d)
	}
	return defs, issues
}

// stripInherit removes Inherit attributes below a def root, recording
// Inherit="False" in the node.
func stripInherit(n *Node) {
	for i, a := range n.Attrs {
		if a.Name == "Inherit" {
			n.noInherit = strings.EqualFold(strings.TrimSpace(a.Value), "false")
			n.Attrs = append(n.Attrs[:i:i], n.Attrs[i+1:]...)
			break
		}
	}
	for _, c := range n.Children {
		stripInherit(c)
	}
}
