package colony

import (
	"bytes"
	"image"
	"image/color"
	"testing"
)

// distinctColours counts the different colours of img.
func distinctColours(img *image.RGBA) int {
	seen := map[[4]byte]bool{}
	for i := 0; i+3 < len(img.Pix); i += 4 {
		seen[[4]byte(img.Pix[i:i+4])] = true
	}
	return len(seen)
}

func TestDrawMapShowsTerrainThingsAndPawns(t *testing.T) {
	w := mustNew(t, testContent(t), Config{Maps: 1, Width: 100, Height: 80, Seed: 7, PawnsPerMap: 6, ThingsPerMap: 120})
	id := w.MapIDs()[0]
	mw, mh, ok := w.MapSize(id)
	if !ok || mw != 100 || mh != 80 {
		t.Fatalf("MapSize = %d, %d, %v; want 100, 80, true", mw, mh, ok)
	}
	for _, size := range []image.Point{{100, 80}, {37, 29}, {400, 320}} {
		base := image.NewRGBA(image.Rectangle{Max: size})
		if !w.DrawMap(id, base, LayerTerrain) {
			t.Fatalf("%v: DrawMap(terrain) = false", size)
		}
		for i := 3; i < len(base.Pix); i += 4 {
			if base.Pix[i] != 255 {
				t.Fatalf("%v: pixel %d left transparent by the terrain layer", size, i/4)
			}
		}
		if n := distinctColours(base); n < 2 {
			t.Fatalf("%v: terrain drawn in %d colours; a generated map has several terrains", size, n)
		}
		full := image.NewRGBA(base.Rect)
		copy(full.Pix, base.Pix)
		w.DrawMap(id, full, LayerThings|LayerPawns)
		if bytes.Equal(full.Pix, base.Pix) {
			t.Fatalf("%v: things and pawns changed no pixel", size)
		}
		// Every pawn's cell shows a pawn colour.
		for _, p := range w.Pawns(id) {
			px := int((int64(p.X)*int64(size.X) + int64(mw) - 1) / int64(mw))
			py := int((int64(p.Y)*int64(size.Y) + int64(mh) - 1) / int64(mh))
			px, py = min(px, size.X-1), min(py, size.Y-1)
			c := full.RGBAAt(px, py)
			if !isPawnColour(c) {
				t.Errorf("%v: pawn %d at cell %d,%d: pixel %d,%d is %v, not a pawn colour", size, p.ID, p.X, p.Y, px, py, c)
			}
		}
	}
}

func isPawnColour(c color.RGBA) bool {
	for _, k := range []kindRule{{works: true}, {grazes: true}, {}} {
		if pawnColor(k) == c {
			return true
		}
	}
	return false
}

func TestDrawMapUnknownOrEmpty(t *testing.T) {
	w := mustNew(t, handContent(), smallConfig(3))
	if w.DrawMap(999, image.NewRGBA(image.Rect(0, 0, 8, 8)), LayerAll) {
		t.Error("DrawMap of an unknown map = true")
	}
	if w.DrawMap(w.MapIDs()[0], image.NewRGBA(image.Rectangle{}), LayerAll) {
		t.Error("DrawMap into an empty image = true")
	}
	if _, _, ok := w.MapSize(999); ok {
		t.Error("MapSize of an unknown map: ok")
	}
}

// TestDrawMapOffsetImage draws into a sub-image: the pixels outside it
// stay as they were.
func TestDrawMapOffsetImage(t *testing.T) {
	w := mustNew(t, handContent(), smallConfig(5))
	whole := image.NewRGBA(image.Rect(0, 0, 64, 64))
	sub := whole.SubImage(image.Rect(16, 16, 48, 48)).(*image.RGBA)
	w.DrawMap(w.MapIDs()[0], sub, LayerAll)
	for y := 0; y < 64; y++ {
		for x := 0; x < 64; x++ {
			inside := image.Pt(x, y).In(sub.Rect)
			if a := whole.RGBAAt(x, y).A; inside != (a == 255) {
				t.Fatalf("pixel %d,%d: alpha %d, inside the sub-image %v", x, y, a, inside)
			}
		}
	}
}

// TestDrawMapLeavesWorldAlone checks drawing reads only: the world's hash
// does not move.
func TestDrawMapLeavesWorldAlone(t *testing.T) {
	w := mustNew(t, testContent(t), smallConfig(9))
	before := w.WorldHash()
	for _, id := range w.MapIDs() {
		w.DrawMap(id, image.NewRGBA(image.Rect(0, 0, 50, 50)), LayerAll)
	}
	if after := w.WorldHash(); after != before {
		t.Fatalf("WorldHash %x after drawing, %x before", after, before)
	}
}
