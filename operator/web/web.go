package web

import (
	"bytes"
	"crypto/sha256"
	_ "embed"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/lockhost/lockhost/host"
	"github.com/lockhost/lockhost/internal/addrkey"
	"github.com/lockhost/lockhost/transport/ws"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Source gives the session's latest picture; *host.Server is one. A
// Source that is also a Painter gets its maps' pictures at /maps/ID.png,
// and one that is also a Sampler gets /api/samples and the page's
// charts; *host.Server is both.
type Source interface {
	Overview() host.Overview
}

// Config configures Handler. Its zero value works: no /metrics, and the
// defaults below.
type Config struct {
	// Gatherer, if set, is served at /metrics in the Prometheus text
	// format (for example the registry of metrics.NewRegistry).
	Gatherer prometheus.Gatherer
	// Interval is how often /events pushes the overview (default 500 ms).
	Interval time.Duration
	// StaleAfter is how old the session's last picture may be before
	// /healthz answers 503 and the page says the session is not updating
	// (default 5 s; the session publishes a few times a second).
	StaleAfter time.Duration
	// MaxStreams caps the /events streams open at once (default 32); one
	// more is answered 503 and the browser retries later.
	MaxStreams int
	// MaxStreamsPerAddr caps the /events streams one address (an IPv6
	// address by its /64) may hold open (default 4), so a few idle
	// clients cannot take every stream; one more is answered 503.
	MaxStreamsPerAddr int
	// Logger receives the handler's errors (default slog.Default()).
	Logger *slog.Logger
	// Token, if set, is required of every request but /healthz: as
	// "Authorization: Bearer TOKEN", or as basic authentication with the
	// token as the password (what a browser's prompt sends). Unset, the
	// routes are open, which suits a loopback address.
	Token string
	// Players, if set, is served at /ws (transport/ws.Path) for players
	// who connect over WebSocket (a *ws.Listener the host serves). The
	// token does not guard it: a player is admitted by the game's own
	// admission (its password, limits and puzzle), as on the game port.
	Players http.Handler
	// Content, if set, is served under /content/ (the host's shared
	// content, docs/protocol.md section 17.3). The token does not guard
	// it: a joiner fetches the content it lacks before it is admitted.
	Content http.Handler
	// Play, if set, is served at /play and under it (the browser player,
	// package operator/play), guarded by the token like the page.
	Play http.Handler
	// Agones, if set, says what the host last told Agones; the JSON
	// carries it as "agones" (null when unset: the host runs outside
	// Agones) and the page shows it in a card. It is called from the
	// handler's goroutines.
	Agones func() Agones
	// PictureSide is the longer side, in pixels, of the maps' pictures at
	// /maps/ID.png (default 256, at most host.MaxPictureSide; never more
	// than a pixel per cell). PictureEvery is the most often one map is
	// drawn (default 5 s): a picture asked for sooner is the last one
	// again.
	PictureSide  int
	PictureEvery time.Duration
	// PortMapping, if set, says how the host is reached from the
	// internet: its router's forwarding of the game port. The JSON
	// carries it as "port_mapping" (null when unset) and the page shows
	// it in a card. It is called from the handler's goroutines.
	PortMapping func() PortMapping
}

// PortMapping is the host's port mapping as the status page shows it
// (cmd/host fills it from transport/portmap).
type PortMapping struct {
	// State is off, searching, mapped, no router, lost or removed.
	State string
	// Method is the protocol the router answered (NAT-PMP, UPnP-IGD v2).
	Method string
	// External is the address a friend joins ("198.51.100.1:30502"),
	// empty unless mapped.
	External string
	// Join is the line a friend types, empty unless mapped.
	Join string
	// Error is why the router did not map the port, if it did not.
	Error string
}

// Agones is what the host last told the Agones SDK server, as the status
// page shows it (cmd/host fills it from operator/agones.Agent.Status).
type Agones struct {
	// State is the GameServer state the host last set: Starting, Ready,
	// Allocated or Shutdown.
	State string
	// Players is the size of the players List.
	Players int
	// HealthPings counts the health pings taken; LastPing is when the
	// last was sent (zero: none yet).
	HealthPings int64
	LastPing    time.Time
}

func (c Config) withDefaults() Config {
	if c.Interval <= 0 {
		c.Interval = 500 * time.Millisecond
	}
	if c.StaleAfter <= 0 {
		c.StaleAfter = 5 * time.Second
	}
	if c.MaxStreams <= 0 {
		c.MaxStreams = 32
	}
	if c.MaxStreamsPerAddr <= 0 {
		c.MaxStreamsPerAddr = 4
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.PictureSide <= 0 || c.PictureSide > host.MaxPictureSide {
		c.PictureSide = 256
	}
	if c.PictureEvery <= 0 {
		c.PictureEvery = 5 * time.Second
	}
	return c
}

//go:embed status.html
var page []byte

// pageCSP allows the page its own inline script and style, by hash, and
// nothing from elsewhere.
var pageCSP = func() string {
	hash := func(tag string) string {
		m := regexp.MustCompile(`(?s)<` + tag + `>(.*?)</` + tag + `>`).FindSubmatch(page)
		if m == nil {
			panic("web: the status page has no " + tag)
		}
		sum := sha256.Sum256(m[1])
		return "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
	}
	return strings.Join([]string{
		"default-src 'none'",
		"script-src " + hash("script"),
		"style-src " + hash("style"),
		"connect-src 'self'",
		"img-src 'self' data:",
		"base-uri 'none'",
		"form-action 'none'",
		"frame-ancestors 'none'",
	}, "; ")
}()

// handler serves the routes.
type handler struct {
	src     Source
	cfg     Config
	pics    *pictures     // the maps' pictures; nil when src draws none
	streams chan struct{} // a slot per open /events stream
	mu      sync.Mutex
	byAddr  map[string]int // open /events streams per address key
}

// Handler returns the status routes over src (see the package comment).
func Handler(src Source, cfg Config) http.Handler {
	cfg = cfg.withDefaults()
	h := &handler{src: src, cfg: cfg, streams: make(chan struct{}, cfg.MaxStreams), byAddr: map[string]int{}}
	if p, ok := src.(Painter); ok {
		h.pics = newPictures(p, cfg.PictureSide, cfg.PictureEvery)
	}
	guard := func(next http.Handler) http.Handler { return next }
	if cfg.Token != "" {
		guard = newTokenCheck(cfg.Token).guard
	}
	mux := http.NewServeMux()
	mux.Handle("GET /{$}", guard(http.HandlerFunc(h.page)))
	mux.Handle("GET /api/overview", guard(http.HandlerFunc(h.overview)))
	mux.Handle("GET /events", guard(http.HandlerFunc(h.events)))
	mux.Handle("GET /api/samples", guard(http.HandlerFunc(h.samples)))
	mux.Handle("GET /maps/{file}", guard(http.HandlerFunc(h.mapPicture)))
	mux.HandleFunc("GET /healthz", h.healthz) // open: it tells only ok or not
	if cfg.Players != nil {
		mux.Handle("GET "+ws.Path, cfg.Players) // open: the game admits players
	}
	if cfg.Content != nil {
		mux.Handle("GET /content/", cfg.Content) // open: what the host shares with every joiner
	}
	if cfg.Play != nil {
		mux.Handle("GET /play", guard(cfg.Play))
		mux.Handle("GET /play/", guard(cfg.Play))
	}
	if cfg.Gatherer != nil {
		mux.Handle("GET /metrics", guard(promhttp.HandlerFor(cfg.Gatherer, promhttp.HandlerOpts{
			ErrorLog:            slog.NewLogLogger(cfg.Logger.Handler(), slog.LevelError),
			ErrorHandling:       promhttp.ContinueOnError,
			MaxRequestsInFlight: 4,
			Timeout:             10 * time.Second,
		})))
	}
	return &routes{next: withHeaders(mux), protected: cfg.Token != ""}
}

// routes is what Handler returns; Serve asks it whether a token guards it.
type routes struct {
	next      http.Handler
	protected bool
}

func (rt *routes) ServeHTTP(w http.ResponseWriter, r *http.Request) { rt.next.ServeHTTP(w, r) }

// protected reports whether h is a Handler whose routes need a token.
func protected(h http.Handler) bool {
	rt, ok := h.(*routes)
	return ok && rt.protected
}

// withHeaders adds the headers every answer gets.
func withHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hd := w.Header()
		hd.Set("X-Content-Type-Options", "nosniff")
		hd.Set("Referrer-Policy", "no-referrer")
		hd.Set("X-Frame-Options", "DENY")
		next.ServeHTTP(w, r)
	})
}

func (h *handler) page(w http.ResponseWriter, r *http.Request) {
	hd := w.Header()
	hd.Set("Content-Type", "text/html; charset=utf-8")
	hd.Set("Content-Security-Policy", pageCSP)
	hd.Set("Cache-Control", "no-cache")
	http.ServeContent(w, r, "status.html", time.Time{}, bytes.NewReader(page))
}

// snapshot is the overview's JSON, as of now.
func (h *handler) snapshot() ([]byte, error) {
	now := time.Now()
	v := view(h.src.Overview(), now, h.cfg.StaleAfter)
	if h.pics == nil && v.MapPictures {
		v.MapPictures, v.NoMapPictures = false, "this status page is not given the maps to draw"
	}
	if h.cfg.Agones != nil {
		v.Agones = agonesView(h.cfg.Agones(), now)
	}
	if h.cfg.PortMapping != nil {
		pm := h.cfg.PortMapping()
		v.PortMapping = &portMappingJSON{State: pm.State, Method: pm.Method, External: pm.External, Join: pm.Join, Error: pm.Error}
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encode overview: %w", err)
	}
	return b, nil
}

func (h *handler) overview(w http.ResponseWriter, r *http.Request) {
	h.serveJSON(w, "overview", h.snapshot)
}

// serveJSON answers with the JSON encode makes, not to be cached; what
// names it in the log and in the error a failed encoding answers.
func (h *handler) serveJSON(w http.ResponseWriter, what string, encode func() ([]byte, error)) {
	b, err := encode()
	if err != nil {
		h.cfg.Logger.Error("status "+what, "err", err)
		http.Error(w, "cannot encode the "+what, http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.Write(append(b, '\n'))
}

// events streams the overview as Server-Sent Events until the client
// leaves or the server shuts down (the request's context ends).
func (h *handler) events(w http.ResponseWriter, r *http.Request) {
	key := addrkey.OfHostPort(r.RemoteAddr)
	if !h.holdAddr(key) {
		w.Header().Set("Retry-After", "5")
		http.Error(w, "too many status streams open from this address", http.StatusServiceUnavailable)
		return
	}
	defer h.releaseAddr(key)
	select {
	case h.streams <- struct{}{}:
		defer func() { <-h.streams }()
	default:
		w.Header().Set("Retry-After", "5")
		http.Error(w, "too many status streams open", http.StatusServiceUnavailable)
		return
	}
	rc := http.NewResponseController(w)
	hd := w.Header()
	hd.Set("Content-Type", "text/event-stream")
	hd.Set("Cache-Control", "no-store")
	hd.Set("X-Accel-Buffering", "no") // a proxy in front must not buffer the stream
	// retry: how long the browser waits before reconnecting.
	if !h.send(rc, w, []byte("retry: 2000\n\n")) {
		return
	}
	tick := time.NewTicker(h.cfg.Interval)
	defer tick.Stop()
	for {
		b, err := h.snapshot()
		if err != nil {
			h.cfg.Logger.Error("status stream", "err", err)
			return
		}
		// The JSON has no newline, so one data line carries it.
		msg := make([]byte, 0, len(b)+8)
		msg = append(append(append(msg, "data: "...), b...), "\n\n"...)
		if !h.send(rc, w, msg) {
			return
		}
		select {
		case <-r.Context().Done():
			return
		case <-tick.C:
		}
	}
}

// holdAddr counts a stream for the address key, or reports false if the
// address holds its most.
func (h *handler) holdAddr(key string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.byAddr[key] >= h.cfg.MaxStreamsPerAddr {
		return false
	}
	h.byAddr[key]++
	return true
}

// releaseAddr uncounts a stream holdAddr counted.
func (h *handler) releaseAddr(key string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.byAddr[key]--; h.byAddr[key] <= 0 {
		delete(h.byAddr, key)
	}
}

// send writes and flushes one event within a deadline, so a client that
// stopped reading does not hold its stream forever; false means the
// stream is over.
func (h *handler) send(rc *http.ResponseController, w http.ResponseWriter, b []byte) bool {
	if err := rc.SetWriteDeadline(time.Now().Add(10 * time.Second)); err != nil && !errors.Is(err, http.ErrNotSupported) {
		return false
	}
	if _, err := w.Write(b); err != nil {
		return false
	}
	return rc.Flush() == nil
}

// healthz answers 200 while the session goroutine keeps publishing its
// picture, 503 before the first one or once it is older than StaleAfter.
func (h *handler) healthz(w http.ResponseWriter, r *http.Request) {
	o := h.src.Overview()
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	switch age := time.Since(o.At); {
	case o.At.IsZero():
		w.WriteHeader(http.StatusServiceUnavailable)
		fmt.Fprintln(w, "starting: the session has not published its state yet")
	case age > h.cfg.StaleAfter:
		w.WriteHeader(http.StatusServiceUnavailable)
		fmt.Fprintf(w, "stale: the session last published its state %s ago (tick %d)\n", age.Round(time.Millisecond), o.Tick)
	default:
		fmt.Fprintln(w, "ok")
	}
}
