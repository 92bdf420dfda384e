package modsync

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestCacheOwnersAndUse: a view remembers its manifest, so Owners names
// the mod file each cached file is; it marks the files it links used
// now, so a prune by age keeps them; once a prune removed every file of
// a manifest, the manifest is forgotten too.
func TestCacheOwnersAndUse(t *testing.T) {
	m := build(t, BuildOptions{}, synthMod(t, t.TempDir(), "test.synth"))
	h := serve(t, m)
	c := newCache(t)
	fetchAll(t, c, h.srv.URL, m)
	if own, err := c.Owners(); err != nil || len(own) != 0 {
		t.Fatalf("owners before any view: %v, %v", own, err)
	}
	old := time.Now().Add(-48 * time.Hour)
	for _, f := range m.Mods[0].Files {
		if err := os.Chtimes(c.objectPath(f.Hash), old, old); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.View(m, 0); err != nil {
		t.Fatal(err)
	}
	own, err := c.Owners()
	if err != nil {
		t.Fatal(err)
	}
	lamp := modFile(m, "test.synth", "Textures/Things/Lamp.png")
	if o := own[lamp.Hash]; len(o) != 1 || o[0].PackageID != "test.synth" || o[0].Path != lamp.Path || !strings.Contains(o[0].String(), "test.synth") {
		t.Errorf("owners of the lamp: %+v", o)
	}
	if len(own) != len(m.Mods[0].Files) {
		t.Errorf("%d owned hashes, %d files", len(own), len(m.Mods[0].Files))
	}
	// Used a moment ago: a prune of what is older than a day keeps all.
	if n, _, err := c.Prune(nil, time.Now().Add(-24*time.Hour)); err != nil || n != 0 {
		t.Errorf("prune of files unused for a day, after a view: %d, %v", n, err)
	}
	if own, _ := c.Owners(); len(own) == 0 {
		t.Error("the manifest was forgotten while its files remain")
	}
	if n, _, err := c.Prune(nil, time.Time{}); err != nil || n != len(m.Mods[0].Files) {
		t.Errorf("prune all: %d, %v", n, err)
	}
	if own, err := c.Owners(); err != nil || len(own) != 0 {
		t.Errorf("owners after pruning every file: %v, %v", own, err)
	}
	// A remembered manifest whose bytes changed is named, not trusted.
	if err := c.Remember(m); err != nil {
		t.Fatal(err)
	}
	mh, _ := m.Hash()
	p := filepath.Join(c.Dir(), "manifests", mh.String())
	if err := os.WriteFile(p, []byte("not a manifest"), 0o644); err != nil {
		t.Fatal(err)
	}
	if own, err := c.Owners(); err == nil || len(own) != 0 {
		t.Errorf("a damaged remembered manifest: %v, %v", own, err)
	}
}
