package hostcontent

import (
	"bytes"
	"log/slog"
	"path/filepath"
	"testing"

	"github.com/lockhost/lockhost/defs"
	"github.com/lockhost/lockhost/game/colony"
	gamecontent "github.com/lockhost/lockhost/game/content"
	"github.com/lockhost/lockhost/saves"
	"github.com/lockhost/lockhost/snapshot"
)

func bundle(t *testing.T) *gamecontent.Bundle {
	t.Helper()
	b, err := gamecontent.Load(nil, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Summary()) < 2 {
		t.Fatalf("embedded content has %d def databases; the tests need two", len(b.Summary()))
	}
	return b
}

func TestContent(t *testing.T) {
	b := bundle(t)
	var logged bytes.Buffer
	c := Content(b, slog.New(slog.NewTextHandler(&logged, nil)))
	if c.GameVersion != b.GameVersion || len(c.Mods) != len(b.Mods) || len(c.Databases) != len(b.Summary()) {
		t.Fatalf("content %+v does not describe the bundle", c)
	}
	for i, d := range b.Summary() {
		if c.Databases[i] != d {
			t.Errorf("database %d: %+v, want %+v", i, c.Databases[i], d)
		}
	}
	want := b.Summary()[1].Type
	tests := []struct {
		name  string
		types []string
		want  []string
	}{
		{"one type", []string{want}, []string{want}},
		{"unknown type", []string{"NoSuchDef"}, nil},
		{"none", nil, nil},
	}
	for _, tc := range tests {
		m, err := defs.UnmarshalDetail(c.Detail(tc.types))
		if err != nil {
			t.Fatalf("%s: detail does not decode: %v", tc.name, err)
		}
		var got []string
		for _, db := range m.Databases {
			got = append(got, db.Type)
			if len(db.Defs) == 0 {
				t.Errorf("%s: database %s carries no per-def detail", tc.name, db.Type)
			}
		}
		if len(got) != len(tc.want) || (len(got) == 1 && got[0] != tc.want[0]) {
			t.Errorf("%s: detail has databases %v, want %v", tc.name, got, tc.want)
		}
	}
	if logged.Len() != 0 {
		t.Errorf("logged %q for details that encode", logged.String())
	}
}

func TestSaveMeta(t *testing.T) {
	b := bundle(t)
	m := SaveMeta(b, "game one")
	if m.GameName != "game one" || m.GameVersion != b.GameVersion || len(m.Mods) != len(b.Mods) {
		t.Fatalf("meta %+v does not describe the bundle", m)
	}
	sum := b.Summary()
	if len(m.Databases) != len(sum) {
		t.Fatalf("meta has %d databases, bundle %d", len(m.Databases), len(sum))
	}
	for i, d := range sum {
		if got := m.Databases[i]; got.Type != d.Type || got.Count != d.Count || got.Hash != d.Hash {
			t.Errorf("database %d: %+v, want %+v", i, got, d)
		}
	}
}

// TestLoadSaveRoundTrip writes a small world as a save file and loads it
// back with the bundle's content: the world must hash the same.
func TestLoadSaveRoundTrip(t *testing.T) {
	b := bundle(t)
	w, err := colony.New(b.Content, colony.Config{Maps: 2, Width: 24, Height: 24, Seed: 7, ThingsPerMap: 10, PawnsPerMap: 2})
	if err != nil {
		t.Fatal(err)
	}
	for range 5 {
		w.Step()
	}
	point, err := snapshot.Build(w, snapshot.BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	body, err := snapshot.NewPayload(point, 0, w.Tick(), nil)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "a.lhsave")
	meta := SaveMeta(b, "g")
	meta.Tick = w.Tick()
	if err := saves.Write(path, meta, body); err != nil {
		t.Fatal(err)
	}
	f, err := saves.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	sim, err := LoadSave(b, f)
	if err != nil {
		t.Fatal(err)
	}
	if sim.Tick() != w.Tick() || sim.WorldHash() != w.WorldHash() {
		t.Fatalf("loaded tick %d hash %x, saved tick %d hash %x", sim.Tick(), sim.WorldHash(), w.Tick(), w.WorldHash())
	}
}
