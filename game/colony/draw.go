package colony

import (
	"hash/fnv"
	"image"
	"image/color"
	"strings"
)

// Layers says what DrawMap paints. Terrain never changes once a map
// exists, so a display can paint LayerTerrain once into a base image and,
// on every frame, copy it and paint LayerThings|LayerPawns over the copy.
type Layers uint8

// The layers DrawMap can paint, bottom to top.
const (
	LayerTerrain Layers = 1 << iota // the terrain grid
	LayerThings                     // plants, items, food and buildings
	LayerPawns                      // pawns, drawn at least 3 pixels wide
	LayerAll     = LayerTerrain | LayerThings | LayerPawns
)

// MapSize returns the width and height in cells of map mapID; ok is false
// for an unknown map. Like DrawMap it only reads the world.
func (w *World) MapSize(mapID int32) (width, height int, ok bool) {
	m := w.mapByID(mapID)
	if m == nil {
		return 0, 0, false
	}
	return int(m.W), int(m.H), true
}

// DrawMap paints the layers of map mapID into img, scaling the map to
// img's bounds (nearest cell: a pixel shows the cell under its corner,
// and a cell bigger than a pixel is a block). It reports false, painting
// nothing, for an unknown map or an empty img.
//
// DrawMap only reads the world: like MarshalMap it may run on a clone
// while other goroutines read the same clone, never while the world is
// stepped or commanded. It takes time in proportion to img's pixels (for
// the terrain) and to the map's things and pawns, never to the map's
// area, so a 4096x4096 map draws into a 256x256 thumbnail as fast as a
// small one.
func (w *World) DrawMap(mapID int32, img *image.RGBA, layers Layers) bool {
	m := w.mapByID(mapID)
	b := img.Bounds()
	if m == nil || b.Empty() {
		return false
	}
	p := painter{m: m, img: img, pw: b.Dx(), ph: b.Dy()}
	if layers&LayerTerrain != 0 {
		p.terrain(w.terrainPalette())
	}
	if layers&LayerThings != 0 {
		for i := range m.Things {
			if t := &m.Things[i]; !t.dead {
				p.cell(t.X, t.Y, w.thingColor(t), 1)
			}
		}
	}
	if layers&LayerPawns != 0 {
		for i := range m.Pawns {
			if pw := &m.Pawns[i]; !pw.dead {
				p.cell(pw.X, pw.Y, pawnColor(w.r.kinds[pw.Kind]), 3)
			}
		}
	}
	return true
}

// painter maps cells of one map onto the pixels of one image.
type painter struct {
	m      *gameMap
	img    *image.RGBA
	pw, ph int // the image's size in pixels
}

// terrain paints every pixel with the terrain of the cell under it.
func (p painter) terrain(pal []color.RGBA) {
	b := p.img.Bounds()
	for py := 0; py < p.ph; py++ {
		cy := int32(int64(py) * int64(p.m.H) / int64(p.ph))
		row := p.img.Pix[p.img.PixOffset(b.Min.X, b.Min.Y+py):]
		for px := 0; px < p.pw; px++ {
			cx := int32(int64(px) * int64(p.m.W) / int64(p.pw))
			c := pal[p.m.Terrain.at(p.m.idx(cx, cy))]
			o := px * 4
			row[o], row[o+1], row[o+2], row[o+3] = c.R, c.G, c.B, 255
		}
	}
}

// cell fills the pixels that show cell x, y, grown to at least minPx
// pixels a side around their centre so small things stay visible on a
// shrunk map.
func (p painter) cell(x, y int32, c color.RGBA, minPx int) {
	if !p.m.in(x, y) {
		return
	}
	x0, x1 := pixelSpan(x, p.m.W, p.pw, minPx)
	y0, y1 := pixelSpan(y, p.m.H, p.ph, minPx)
	b := p.img.Bounds()
	for py := y0; py < y1; py++ {
		row := p.img.Pix[p.img.PixOffset(b.Min.X, b.Min.Y+py):]
		for px := x0; px < x1; px++ {
			o := px * 4
			row[o], row[o+1], row[o+2], row[o+3] = c.R, c.G, c.B, 255
		}
	}
}

// pixelSpan returns the pixels [lo, hi) that show cell c of n cells on an axis
// of px pixels, at least minPx of them, centred and kept inside the axis.
func pixelSpan(c, n int32, px, minPx int) (lo, hi int) {
	lo = int((int64(c)*int64(px) + int64(n) - 1) / int64(n))
	hi = int((int64(c+1)*int64(px) + int64(n) - 1) / int64(n))
	if hi-lo < minPx {
		lo = (lo+hi)/2 - minPx/2
		hi = lo + minPx
	}
	return max(lo, 0), min(hi, px)
}

// terrainPalette gives each terrain type a colour: from its name when the
// name says what it is (water, marsh, sand, soil, gravel, stone, rock,
// concrete), else from its rules (impassable is grey, then by fertility),
// tinted by a hash of the name so two terrains rarely look alike.
func (w *World) terrainPalette() []color.RGBA {
	pal := make([]color.RGBA, 256)
	for i, t := range w.r.content.Terrains {
		pal[i] = terrainColor(t.Name, w.r.terrains[i])
	}
	return pal
}

// namedTerrain is a terrain colour picked by a word in the defName.
var namedTerrain = []struct {
	word string
	c    color.RGBA
}{
	{"waterdeep", color.RGBA{31, 64, 128, 255}},
	{"water", color.RGBA{64, 112, 176, 255}},
	{"marsh", color.RGBA{84, 96, 60, 255}},
	{"mud", color.RGBA{96, 80, 56, 255}},
	{"sand", color.RGBA{204, 186, 132, 255}},
	{"soilrich", color.RGBA{88, 68, 44, 255}},
	{"soil", color.RGBA{120, 96, 62, 255}},
	{"gravel", color.RGBA{148, 140, 124, 255}},
	{"concrete", color.RGBA{176, 176, 172, 255}},
	{"rough", color.RGBA{128, 122, 112, 255}},
	{"rock", color.RGBA{88, 84, 80, 255}},
	{"mountain", color.RGBA{88, 84, 80, 255}},
	{"ice", color.RGBA{220, 232, 240, 255}},
}

// terrainColor picks one terrain type's colour.
func terrainColor(name string, r terrainRule) color.RGBA {
	lower := strings.ToLower(name)
	for _, n := range namedTerrain {
		if strings.Contains(lower, n.word) {
			return n.c
		}
	}
	h := fnv.New32a()
	h.Write([]byte(name))
	tint := int(h.Sum32()%24) - 12
	if !r.passable {
		return shade(color.RGBA{96, 92, 88, 255}, tint)
	}
	f := min(max(r.fertility, 0), 140)
	// From dry tan at 0% fertility to green-brown at 140%.
	base := color.RGBA{uint8(200 - f*3/5), uint8(180 - f/4), uint8(130 - f*3/10), 255}
	return shade(base, tint)
}

// shade adds d to each channel of c, clamped.
func shade(c color.RGBA, d int) color.RGBA {
	ch := func(v uint8) uint8 { return uint8(min(max(int(v)+d, 0), 255)) }
	return color.RGBA{ch(c.R), ch(c.G), ch(c.B), 255}
}

// thingColor is the colour of one thing: plants green (pale while unsown
// or young), food yellow, items orange, buildings grey or, for storage,
// violet.
func (w *World) thingColor(t *thing) color.RGBA {
	tr := w.r.things[t.Def]
	switch tr.cat {
	case catPlant:
		if t.Flags&flagUnsown != 0 {
			return color.RGBA{150, 130, 80, 255}
		}
		if tr.growTicks > 0 && t.Growth < tr.growTicks {
			return color.RGBA{110, 170, 80, 255}
		}
		return color.RGBA{34, 120, 40, 255}
	case catFood:
		return color.RGBA{236, 200, 60, 255}
	case catBuilding:
		if tr.storage > 0 {
			return color.RGBA{150, 100, 190, 255}
		}
		return color.RGBA{60, 56, 52, 255}
	default:
		return color.RGBA{230, 130, 40, 255}
	}
}

// pawnColor is the colour of a pawn: workers red, grazers white, others
// blue.
func pawnColor(k kindRule) color.RGBA {
	switch {
	case k.works:
		return color.RGBA{230, 40, 40, 255}
	case k.grazes:
		return color.RGBA{250, 250, 250, 255}
	default:
		return color.RGBA{60, 120, 250, 255}
	}
}
