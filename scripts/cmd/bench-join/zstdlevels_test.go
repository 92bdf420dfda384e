package main

import (
	"testing"

	"github.com/lockhost/lockhost/game/colony"
)

// TestMapPartsSplitsAColonyMap: the split the compression figures are
// made of reads game/colony's map encoding as it is: the terrain is one
// byte a cell, every thing record has its nine fields, and the three
// parts are the whole blob. A change of the encoding fails here rather
// than misreporting where the bytes are.
func TestMapPartsSplitsAColonyMap(t *testing.T) {
	content, _, err := colony.DefaultContent()
	if err != nil {
		t.Fatal(err)
	}
	cfg := colony.SizedConfig(1<<20, 1)
	w, err := colony.New(content, cfg)
	if err != nil {
		t.Fatal(err)
	}
	blob, err := w.MarshalMap(0)
	if err != nil {
		t.Fatal(err)
	}
	p, ok := mapParts(blob)
	if !ok {
		t.Fatal("a map blob not read as a map")
	}
	if len(p.terrain) != cfg.Width*cfg.Height || p.width != cfg.Width {
		t.Errorf("terrain of %d cells, width %d; want %d×%d", len(p.terrain), p.width, cfg.Width, cfg.Height)
	}
	if got := len(p.terrain) + len(p.records) + len(p.rest); got != len(blob) {
		t.Errorf("parts of %d bytes in all, the blob %d", got, len(blob))
	}
	cols := 0
	for _, c := range p.columns {
		if len(c) < cfg.ThingsPerMap {
			t.Errorf("a field's column of %d bytes for %d things", len(c), cfg.ThingsPerMap)
		}
		cols += len(c)
	}
	if cols != len(p.records) {
		t.Errorf("columns of %d bytes, records of %d", cols, len(p.records))
	}
	world, err := w.MarshalWorld()
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := mapParts(world); ok {
		t.Error("the world blob read as a map")
	}
}
