package defs

import (
	"fmt"
	"io"
	"io/fs"
	"maps"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

// selfNamed lists the def types the game names itself when a def has no
// <defName>, with how it derives the name from the resolved def.
var selfNamed = map[string]func(n *Node) string{
	// SongDef: the last part of <clipPath>, split at / and \.
	"SongDef": func(n *Node) string {
		p, _ := n.Value("clipPath")
		if p == "" {
			return ""
		}
		parts := strings.FieldsFunc(p, func(r rune) bool { return r == '/' || r == '\\' })
		if len(parts) == 0 || strings.HasSuffix(p, "/") || strings.HasSuffix(p, `\`) {
			return ""
		}
		return parts[len(parts)-1]
	},
	// ScatterableDef: "Scatterable_" followed by <texturePath>.
	"ScatterableDef": func(n *Node) string {
		p, _ := n.Value("texturePath")
		if p == "" {
			return ""
		}
		return "Scatterable_" + p
	},
}

// SelfNamedTypes returns the def types whose defs may omit <defName>
// because the game derives the name from another field, in sorted order:
// the keys of selfNamed, so the list and the rules cannot drift apart.
func SelfNamedTypes() []string { return slices.Sorted(maps.Keys(selfNamed)) }

// defName returns the name of the resolved def e, or "" after logging an
// error. A <defName> is used as written; the types in selfNamed get the
// game's derived name; a tag spelled with other letter case (<DefName>, as
// old content has it) is read like the game's case-insensitive fallback,
// with a warning.
func (r *resolver) defName(e *entry) string {
	if v, ok := e.node.Value("defName"); ok && v != "" {
		return v
	}
	if f := selfNamed[e.raw.Type]; f != nil {
		if v := f(e.node); v != "" {
			return v
		}
	}
	for _, c := range e.node.Children {
		if c.Name != "defName" && strings.EqualFold(c.Name, "defName") && c.Text != "" {
			r.log.warn(e, fmt.Sprintf("%s %s: <%s> is read as <defName> (the game matches this tag regardless of case and reports it as an error; write <defName>)", e.raw.Type, c.Text, c.Name))
			return c.Text
		}
	}
	msg := fmt.Sprintf("%s has no defName", e.raw.Type)
	if e.missing != "" {
		msg += fmt.Sprintf(" (it may inherit one from parent %q, which is not in the scan)", e.missing)
	}
	r.log.fail(e, msg)
	return ""
}

// derivedPackageID is the package ID given to a mod whose About.xml has
// none: "legacy." followed by its folder name in lower case, with
// characters other than letters, digits, '.' and '_' replaced by '_'.
func derivedPackageID(src ModSource, i int) string {
	base := ""
	if src.Dir != "" {
		base = filepath.Base(filepath.Clean(src.Dir))
	}
	if base == "" || base == "." || base == string(filepath.Separator) {
		base = fmt.Sprintf("mod%d", i+1)
	}
	var b strings.Builder
	b.WriteString("legacy.")
	for _, r := range strings.ToLower(base) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '.', r == '_':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	return b.String()
}

// readFileBounded reads a whole file of at most limit bytes, failing
// without reading more when it is larger, whatever its size claims.
func readFileBounded(fsys fs.FS, name string, limit int64) ([]byte, error) {
	f, err := fsys.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	size := int64(512)
	if st, err := f.Stat(); err == nil && st.Size() > 0 {
		size = min(st.Size(), limit) + 1
	}
	buf := make([]byte, 0, size)
	lr := io.LimitReader(f, limit+1)
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := lr.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	if int64(len(buf)) > limit {
		return nil, fmt.Errorf("%s is larger than %d bytes", path.Base(name), limit)
	}
	return buf, nil
}
