package host

import (
	"context"
	"errors"
	"fmt"
	"image"

	"github.com/lockhost/lockhost/lockstep"
)

// MapPainter is implemented by a simulation that can draw its maps: the
// host then draws each map's picture for the status page
// (Server.PaintMap). Both methods only read the simulation; the host
// calls them on the session goroutine, between two ticks. PaintMap paints
// map id scaled to img's bounds, and must cost time in proportion to
// img's pixels and the map's contents, not its area, since it runs on the
// tick's goroutine. Package colony's World is one.
type MapPainter interface {
	// MapSize returns the size of map id in cells; ok is false for an
	// unknown map.
	MapSize(id int32) (width, height int, ok bool)
	// PaintMap paints map id into img, reporting false for an unknown
	// map.
	PaintMap(id int32, img *image.RGBA) bool
}

// MaxPictureSide bounds the longer side, in pixels, of a map picture.
const MaxPictureSide = 1024

// ErrNoPictures is PaintMap's error on a host that cannot draw its maps:
// a relay host, which runs no world of its own, or a game that is not a
// MapPainter. Overview.NoMapPictures says which.
var ErrNoPictures = errors.New("this host draws no map pictures")

// ErrUnknownMap is PaintMap's error for a map the world does not have.
var ErrUnknownMap = errors.New("no such map")

// MapPicture is one map as Server.PaintMap drew it.
type MapPicture struct {
	ID int32
	// Width and Height are the map's size in cells; the image keeps
	// their ratio.
	Width, Height int
	// Tick is the tick of the state drawn.
	Tick uint64
	// Version is the map's version when drawn (lockstep.MapVersioner),
	// when Versioned; a simulation that tells no versions is drawn anew
	// on every call.
	Version   uint64
	Versioned bool
	// Image is the picture. It is nil when PaintMap was handed an
	// earlier picture of the same map, size and version, which stands.
	Image *image.RGBA
}

// PaintMap draws map id, scaled to at most maxSide pixels on its longer
// side (never more than one pixel per cell) with the map's aspect, from
// the host's own state: it runs on the session goroutine between two
// ticks, so the picture is of one tick. Given since, an earlier picture
// of the same map, it draws nothing when the map's version and size are
// unchanged (the simulation tells versions), and returns since's fields
// with a nil Image and the current Tick.
//
// It fails with ErrNoPictures on a host that draws no maps, ErrUnknownMap
// for a map the world lacks, ErrSessionOver once the session has ended,
// or ctx's error if ctx ends first (the draw is then skipped, if it had
// not begun).
func (s *Server) PaintMap(ctx context.Context, id int32, maxSide int, since *MapPicture) (MapPicture, error) {
	if maxSide < 1 || maxSide > MaxPictureSide {
		return MapPicture{}, fmt.Errorf("map picture of %d pixels: want 1..%d", maxSide, MaxPictureSide)
	}
	var (
		pic  MapPicture
		err  error
		done = make(chan struct{})
	)
	fn := func() {
		defer close(done)
		if ctx.Err() != nil {
			return // nobody waits for it any more
		}
		pic, err = s.sess.paintMap(id, maxSide, since)
	}
	select {
	case s.sess.calls <- fn:
	case <-s.sess.done:
		return MapPicture{}, ErrSessionOver
	case <-ctx.Done():
		return MapPicture{}, ctx.Err()
	}
	select {
	case <-done:
		return pic, err
	case <-s.sess.done:
		select {
		case <-done: // it ran inside the session's loop before it ended
			return pic, err
		default:
			return MapPicture{}, ErrSessionOver
		}
	case <-ctx.Done():
		return MapPicture{}, ctx.Err()
	}
}

// paintMap is PaintMap on the session goroutine.
func (s *session) paintMap(id int32, maxSide int, since *MapPicture) (MapPicture, error) {
	p, why := s.mode.painter()
	if p == nil {
		return MapPicture{}, fmt.Errorf("%w: %s", ErrNoPictures, why)
	}
	w, h, ok := p.MapSize(id)
	if !ok || w < 1 || h < 1 {
		return MapPicture{}, fmt.Errorf("map %d: %w", id, ErrUnknownMap)
	}
	sim := s.auth.Sim()
	pic := MapPicture{ID: id, Width: w, Height: h, Tick: sim.Tick()}
	if mv, ok := sim.(lockstep.MapVersioner); ok {
		pic.Version, pic.Versioned = mv.MapVersion(id), true
	}
	pw, ph := pictureSize(w, h, maxSide)
	if since != nil && since.Image != nil && since.ID == id && since.Versioned && pic.Versioned &&
		since.Version == pic.Version && since.Width == w && since.Height == h && since.Image.Bounds().Size() == image.Pt(pw, ph) {
		return pic, nil
	}
	pic.Image = image.NewRGBA(image.Rect(0, 0, pw, ph))
	if !p.PaintMap(id, pic.Image) {
		return MapPicture{}, fmt.Errorf("map %d: %w", id, ErrUnknownMap)
	}
	return pic, nil
}

// pictureSize is the size in pixels of a picture of a w by h map whose
// longer side is at most maxSide pixels and at most one pixel per cell,
// in the map's aspect, each side at least one pixel.
func pictureSize(w, h, maxSide int) (pw, ph int) {
	long := max(w, h)
	side := min(long, maxSide)
	pw = max(1, int(int64(w)*int64(side)/int64(long)))
	ph = max(1, int(int64(h)*int64(side)/int64(long)))
	return pw, ph
}
