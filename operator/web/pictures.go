package web

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"image/png"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/lockhost/lockhost/host"
	"github.com/lockhost/lockhost/internal/ratelimit"
	"github.com/lockhost/lockhost/lockstep"
)

// Painter draws the session's maps from the host's own state;
// *host.Server is one. A Source that is also a Painter gets its maps'
// pictures at /maps/ID.png.
type Painter interface {
	PaintMap(ctx context.Context, id int32, maxSide int, since *host.MapPicture) (host.MapPicture, error)
}

// The pictures' budget: at most this many maps drawn per second, in all,
// with bursts of pictureBurst (a page opening on many maps). Each draw
// runs on the session goroutine between two ticks, for about a
// millisecond on a big map, so the tick loses at most about 1% of a core
// to pictures however many pages are open. Past the budget a map's last
// picture is served again, or 503 when there is none.
const (
	pictureRate  = 10
	pictureBurst = 32
	// pictureWait bounds a draw's wait for the session goroutine.
	pictureWait = 5 * time.Second
)

// errPictureBusy says the pictures' budget is spent for now.
var errPictureBusy = errors.New("too many map pictures drawn just now; try again in a moment")

// pictures keeps the last picture of each map, as PNG, and draws a map
// again only when its picture is older than every (and the map changed,
// when the game tells versions). One draw runs at a time (draw); mu
// guards the rest.
type pictures struct {
	p     Painter
	side  int
	every time.Duration
	draw  chan struct{}

	mu     sync.Mutex
	byMap  map[int32]*picture
	budget ratelimit.Bucket
}

// picture is one map's last picture. Only at changes after it is made,
// under pictures.mu.
type picture struct {
	pic  host.MapPicture // the drawing, kept to tell the painter what the PNG shows
	png  []byte
	etag string
	at   time.Time // when drawn, or last found unchanged
}

func newPictures(p Painter, side int, every time.Duration) *pictures {
	return &pictures{p: p, side: side, every: every, draw: make(chan struct{}, 1), byMap: map[int32]*picture{}}
}

// get returns map id's picture, drawn at most every ps.every.
func (ps *pictures) get(ctx context.Context, id int32) (data []byte, etag string, err error) {
	if p := ps.fresh(id, time.Now()); p != nil {
		return p.png, p.etag, nil // without waiting for a draw of another map
	}
	select {
	case ps.draw <- struct{}{}:
		defer func() { <-ps.draw }()
	case <-ctx.Done():
		return nil, "", ctx.Err()
	}
	now := time.Now()
	ps.mu.Lock()
	old := ps.byMap[id]
	fresh := old != nil && now.Sub(old.at) < ps.every
	spent := !fresh && !ps.budget.Take(now, pictureRate, pictureBurst)
	ps.mu.Unlock()
	switch {
	case fresh || (spent && old != nil):
		return old.png, old.etag, nil
	case spent:
		return nil, "", errPictureBusy
	}
	var since *host.MapPicture
	if old != nil {
		since = &old.pic
	}
	ctx, cancel := context.WithTimeout(ctx, pictureWait)
	defer cancel()
	pic, err := ps.p.PaintMap(ctx, id, ps.side, since)
	if err != nil {
		if errors.Is(err, host.ErrUnknownMap) {
			ps.forget(id)
		}
		return nil, "", err
	}
	ps.mu.Lock()
	defer ps.mu.Unlock()
	if pic.Image == nil && old != nil { // unchanged since the last picture
		old.at = now
		return old.png, old.etag, nil
	}
	b, err := encodePNG(pic.Image)
	if err != nil {
		return nil, "", err
	}
	if len(ps.byMap) >= lockstep.MaxMaps {
		clear(ps.byMap) // maps come and go: forget the lot rather than grow
	}
	p := &picture{pic: pic, png: b, etag: fmt.Sprintf(`"map%d-tick%d"`, id, pic.Tick), at: now}
	ps.byMap[id] = p
	return p.png, p.etag, nil
}

// fresh is map id's picture if it is younger than ps.every, else nil.
func (ps *pictures) fresh(id int32, now time.Time) *picture {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	if p := ps.byMap[id]; p != nil && now.Sub(p.at) < ps.every {
		return p
	}
	return nil
}

// forget drops map id's picture.
func (ps *pictures) forget(id int32) {
	ps.mu.Lock()
	delete(ps.byMap, id)
	ps.mu.Unlock()
}

// encodePNG is img as a PNG, compressed for speed: a picture is remade
// every few seconds.
func encodePNG(img *image.RGBA) ([]byte, error) {
	var buf bytes.Buffer
	enc := png.Encoder{CompressionLevel: png.BestSpeed}
	if err := enc.Encode(&buf, img); err != nil {
		return nil, fmt.Errorf("encode map picture: %w", err)
	}
	return buf.Bytes(), nil
}

// mapPicture serves /maps/ID.png.
func (h *handler) mapPicture(w http.ResponseWriter, r *http.Request) {
	idText, isPNG := strings.CutSuffix(r.PathValue("file"), ".png")
	id, err := strconv.ParseInt(idText, 10, 32)
	if !isPNG || err != nil {
		http.Error(w, "not found: map pictures are /maps/ID.png", http.StatusNotFound)
		return
	}
	if h.pics == nil {
		http.Error(w, "not found: this host draws no map pictures", http.StatusNotFound)
		return
	}
	b, etag, err := h.pics.get(r.Context(), int32(id))
	switch {
	case errors.Is(err, host.ErrUnknownMap), errors.Is(err, host.ErrNoPictures):
		http.Error(w, "not found: "+err.Error(), http.StatusNotFound)
		return
	case err != nil:
		if r.Context().Err() == nil {
			h.cfg.Logger.Debug("map picture", "map", id, "err", err)
		}
		w.Header().Set("Retry-After", "1")
		http.Error(w, "map picture unavailable: "+err.Error(), http.StatusServiceUnavailable)
		return
	}
	hd := w.Header()
	hd.Set("Content-Type", "image/png")
	hd.Set("Cache-Control", "no-cache")
	hd.Set("ETag", etag)
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(b))
}
