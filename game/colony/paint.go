package colony

import "image"

// PaintMap paints every layer of map mapID into img: DrawMap with
// LayerAll. It is what a host asks of its game to draw the status page's
// map pictures (host.MapPainter), and like DrawMap it only reads.
func (w *World) PaintMap(mapID int32, img *image.RGBA) bool {
	return w.DrawMap(mapID, img, LayerAll)
}
