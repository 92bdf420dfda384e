//go:build js && wasm

package main

import (
	"image"
	"sync"
	"syscall/js"
	"time"

	"github.com/lockhost/lockhost/game/colony"
)

// maxBases is how many maps' terrain images a view keeps.
const maxBases = 8

// maxCanvas is the longest side of the canvas in pixels: a bigger map is
// drawn scaled down (colony.DrawMap picks the cell under each pixel).
const maxCanvas = 768

// canvasView draws one map onto the page's canvas: its terrain painted
// once into a base image (kept for up to maxBases maps, so switching
// back does not paint it again), and per frame the base copied, things
// and pawns painted over it, and the pixels copied into the canvas's
// ImageData.
type canvasView struct {
	canvas, ctx js.Value

	mu       sync.Mutex
	mapID    int32 // the map shown, -1 before the first frame
	selected int32 // pawn ID, 0 for none
	stale    bool  // paint the terrain again

	shown        int32                 // the map base holds
	bases        map[int32]*image.RGBA // terrain of maps shown, by map
	base, frame  *image.RGBA
	pixels, data js.Value // Uint8ClampedArray and the ImageData over it
	lastFrame    time.Time
	lastState    time.Time
}

func newCanvasView(canvas js.Value) *canvasView {
	v := &canvasView{canvas: canvas, mapID: -1, shown: -1}
	if canvas.Truthy() {
		v.ctx = canvas.Call("getContext", "2d")
	}
	return v
}

// invalidate makes the next frame paint the terrain again.
func (v *canvasView) invalidate() {
	v.mu.Lock()
	v.stale = true
	v.mu.Unlock()
}

// want returns the map to show and the selected pawn.
func (v *canvasView) want(w *colony.World) (int32, int32, bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if _, _, ok := w.MapSize(v.mapID); !ok {
		ids := w.MapIDs()
		if len(ids) == 0 {
			return 0, 0, false
		}
		v.mapID, v.selected = ids[0], 0
	}
	stale := v.stale
	v.stale = false
	if stale {
		v.shown, v.bases = -1, nil
	}
	return v.mapID, v.selected, true
}

// canvasSize is the canvas for a map of w by h cells: whole pixels a
// cell up to maxCanvas, else scaled down to it.
func canvasSize(w, h int) (int, int) {
	long := max(w, h, 1)
	if long >= maxCanvas {
		return max(1, w*maxCanvas/long), max(1, h*maxCanvas/long)
	}
	k := maxCanvas / long
	return w * k, h * k
}

// draw paints map mapID of w onto the canvas (on the simulation's
// goroutine, which owns w).
func (v *canvasView) draw(w *colony.World, mapID, selected int32) {
	if !v.ctx.Truthy() {
		return
	}
	if v.shown != mapID {
		v.show(w, mapID)
	}
	copy(v.frame.Pix, v.base.Pix)
	w.DrawMap(mapID, v.frame, colony.LayerThings|colony.LayerPawns)
	js.CopyBytesToJS(v.pixels, v.frame.Pix)
	v.ctx.Call("putImageData", v.data, 0, 0)
	if selected != 0 {
		v.ring(w, mapID, selected)
	}
}

// show makes map mapID the one drawn: its terrain from the cache, or
// painted now, and the canvas sized for it.
func (v *canvasView) show(w *colony.World, mapID int32) {
	mw, mh, _ := w.MapSize(mapID)
	pw, ph := canvasSize(mw, mh)
	base := v.bases[mapID]
	if base == nil {
		base = image.NewRGBA(image.Rect(0, 0, pw, ph))
		w.DrawMap(mapID, base, colony.LayerTerrain)
		if v.bases == nil || len(v.bases) >= maxBases {
			v.bases = map[int32]*image.RGBA{}
		}
		v.bases[mapID] = base
	}
	if v.frame == nil || v.frame.Rect != base.Rect {
		v.frame = image.NewRGBA(base.Rect)
		v.pixels = js.Global().Get("Uint8ClampedArray").New(len(v.frame.Pix))
		v.data = js.Global().Get("ImageData").New(v.pixels, pw, ph)
		v.canvas.Set("width", pw)
		v.canvas.Set("height", ph)
	}
	v.base, v.shown = base, mapID
}

// ring outlines the selected pawn.
func (v *canvasView) ring(w *colony.World, mapID, pawn int32) {
	mw, mh, _ := w.MapSize(mapID)
	for _, p := range w.Pawns(mapID) {
		if p.ID != pawn {
			continue
		}
		pw, ph := v.frame.Rect.Dx(), v.frame.Rect.Dy()
		x := float64(p.X) * float64(pw) / float64(mw)
		y := float64(p.Y) * float64(ph) / float64(mh)
		cell := max(float64(pw)/float64(mw), 3)
		v.ctx.Set("strokeStyle", "#ffffff")
		v.ctx.Set("lineWidth", 2)
		v.ctx.Call("strokeRect", x-cell, y-cell, 3*cell, 3*cell)
		return
	}
}

// frame draws the shown map, at most 60 times a second, and refreshes
// the page's tick and map list a few times a second.
func (c *client) frame(w *colony.World) {
	v := c.canvas
	now := time.Now()
	if now.Sub(v.lastFrame) >= time.Second/60 {
		v.lastFrame = now
		if mapID, sel, ok := v.want(w); ok {
			v.draw(w, mapID, sel)
			c.update(func(s *state) { s.Frames++; s.Map, s.Selected = mapID, sel })
		}
	}
	if now.Sub(v.lastState) >= 250*time.Millisecond {
		v.lastState = now
		stats := w.Stats()
		maps := make([]mapJSON, len(stats))
		for i, m := range stats {
			maps[i] = mapJSON{ID: m.ID, Width: m.Width, Height: m.Height, Pawns: m.Pawns, Things: m.Things}
		}
		c.update(func(s *state) { s.Tick, s.Maps = w.Tick(), maps })
	}
}
