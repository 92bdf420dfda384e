package defs_test

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/cespare/xxhash/v2"

	"github.com/lockhost/lockhost/defs"
)

// The hashing below is written from the protocol specification
// (docs/protocol.md, section 7.1) alone, without this package's encoder:
// a client in another language does the same. XXH64 itself is the
// library's; the encoding around it is re-implemented here.

// specUvarint is unsigned LEB128: 7 bits a byte, low group first, the
// high bit set on every byte but the last.
func specUvarint(b []byte, v uint64) []byte {
	for v >= 0x80 {
		b = append(b, byte(v)|0x80)
		v >>= 7
	}
	return append(b, byte(v))
}

// specStr is uvarint(len(s)) followed by the bytes of s.
func specStr(b []byte, s string) []byte { return append(specUvarint(b, uint64(len(s))), s...) }

// specNode is node(n): name, attributes sorted by name then value, text,
// children in order.
func specNode(b []byte, n *defs.Node) []byte {
	b = specStr(b, n.Name)
	attrs := append([]defs.Attr(nil), n.Attrs...)
	sort.Slice(attrs, func(i, j int) bool {
		if attrs[i].Name != attrs[j].Name {
			return attrs[i].Name < attrs[j].Name
		}
		return attrs[i].Value < attrs[j].Value
	})
	b = specUvarint(b, uint64(len(attrs)))
	for _, a := range attrs {
		b = specStr(specStr(b, a.Name), a.Value)
	}
	b = specStr(b, n.Text)
	b = specUvarint(b, uint64(len(n.Children)))
	for _, c := range n.Children {
		b = specNode(b, c)
	}
	return b
}

// specDatabaseHash is Database.Hash: the defs sorted by name in byte
// order, each as str(name) u64le(Def.Hash), after str(type) and the count.
func specDatabaseHash(typ string, ds []*defs.Def) (uint64, []uint64) {
	sorted := append([]*defs.Def(nil), ds...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Name < sorted[j].Name })
	b := specUvarint(specStr(nil, typ), uint64(len(sorted)))
	defHashes := make([]uint64, len(sorted))
	for i, d := range sorted {
		defHashes[i] = xxhash.Sum64(specNode(specStr(specStr(nil, typ), d.Name), d.Node))
		b = specStr(b, d.Name)
		h := defHashes[i]
		for range 8 {
			b = append(b, byte(h))
			h >>= 8
		}
	}
	return xxhash.Sum64(b), defHashes
}

// TestSpecDatabaseHash computes every database hash of the reference
// game's real content from the specification's description and checks
// it against this package's, def by def.
func TestSpecDatabaseHash(t *testing.T) {
	set, err := defs.ScanDirs([]string{filepath.Join("..", "game", "colony", "content", "Core")}, defs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(set.Databases) < 2 {
		t.Fatalf("the content has %d databases; the test wants real content", len(set.Databases))
	}
	for _, db := range set.Databases {
		got, defHashes := specDatabaseHash(db.Type, db.Defs)
		if got != db.Hash {
			t.Errorf("%s: the spec's hash is %016x, the package's %016x", db.Type, got, db.Hash)
		}
		for i, d := range db.Defs {
			if defHashes[i] != d.Hash {
				t.Errorf("%s %s: the spec's def hash is %016x, the package's %016x", db.Type, d.Name, defHashes[i], d.Hash)
			}
		}
		t.Logf("%s: %d defs, hash %016x", db.Type, len(db.Defs), got)
	}
}

// TestSpecManifestExample reads the example manifest of the protocol
// specification (section 7.3) as a client would: it must be a valid
// manifest, its database hash that of its defs.
func TestSpecManifestExample(t *testing.T) {
	spec, err := os.ReadFile(filepath.Join("..", "docs", "protocol.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, sec, ok := strings.Cut(string(spec), "\n### 7.3 ")
	if !ok {
		t.Fatal("the spec has no section 7.3")
	}
	_, block, ok := strings.Cut(sec, "\n```\n")
	block, _, ok2 := strings.Cut(block, "\n```\n")
	if !ok || !ok2 {
		t.Fatal("section 7.3 has no example block")
	}
	m, err := defs.ReadManifest(strings.NewReader(block))
	if err != nil {
		t.Fatalf("the spec's example manifest: %v", err)
	}
	if len(m.Databases) == 0 || len(m.Databases[0].Defs) == 0 {
		t.Fatal("the spec's example manifest lists no defs")
	}
}
