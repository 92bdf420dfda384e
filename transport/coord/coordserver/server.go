package coordserver

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"github.com/lockhost/lockhost/transport/coord"
	"io"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/coder/websocket"
	"github.com/lockhost/lockhost/internal/addrkey"
	"github.com/lockhost/lockhost/internal/ratelimit"
)

// Server is a coordinator: an http.Handler for its paths, the table of
// registered hosts and the signalling attempts between them and joiners.
// It is safe for concurrent use.
type Server struct {
	cfg       ServerConfig
	mux       *http.ServeMux
	lookups   limiter
	registers limiter
	m         *serverMetrics
	owners    *owners

	mu    sync.Mutex
	hosts map[coord.Code]*hostConn
}

// NewServer makes a coordinator; call Validate on cfg first. It fails
// only on an owners file it cannot read.
func NewServer(cfg ServerConfig) (*Server, error) {
	cfg = cfg.withDefaults()
	own, err := loadOwners(cfg.OwnersFile, cfg.OwnerTTL, cfg.MaxOwners, time.Now())
	if err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, mux: http.NewServeMux(), hosts: map[coord.Code]*hostConn{}, owners: own,
		lookups: newLimiter(cfg.LookupRate, cfg.LookupBurst), registers: newLimiter(cfg.RegisterRate, cfg.RegisterBurst)}
	s.m = newServerMetrics(s)
	s.mux.HandleFunc("GET "+coord.PathHost, s.serveHost)
	s.mux.HandleFunc("GET "+coord.PathLookup+"{code}", s.serveLookup)
	s.mux.HandleFunc("GET "+coord.PathSignal+"{code}", s.serveSignal)
	s.mux.HandleFunc("POST "+coord.PathReport, s.serveReport)
	s.mux.Handle("GET /metrics", s.m.handler())
	s.mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "ok") })
	s.mux.HandleFunc("GET /{page}", s.servePage)
	if cfg.Player != nil {
		s.mux.Handle("GET /play", cfg.Player)
		s.mux.Handle("GET /play/", cfg.Player)
	}
	s.mux.HandleFunc("GET /{$}", s.serveIndex)
	return s, nil
}

// ServeHTTP serves the coordinator's paths.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

// Hosts is the number of hosts registered now.
func (s *Server) Hosts() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.hosts)
}

// limiter is a rate limit per source address and a wider one per /24 or
// /64.
type limiter struct{ addr, prefix *ratelimit.Table[string] }

// maxLimiterKeys bounds each limiter table's memory.
const maxLimiterKeys = 100000

func newLimiter(rate float64, burst int) limiter {
	return limiter{addr: ratelimit.NewTable[string](rate, burst, maxLimiterKeys),
		prefix: ratelimit.NewTable[string](rate*4, burst*4, maxLimiterKeys)}
}

// allow takes a token for the request's source address and its prefix.
func (l limiter) allow(r *http.Request) bool {
	ip, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		ip = r.RemoteAddr
	}
	now := time.Now()
	return l.addr.Allow(addrkey.Of(ip), now) && l.prefix.Allow(addrkey.Prefix(ip), now)
}

// httpError answers with status and a JSON {"error": sentence}.
func httpError(w http.ResponseWriter, status int, sentence string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	b, _ := json.Marshal(map[string]string{"error": sentence})
	w.Write(append(b, '\n'))
}

// tooMany answers a request over its rate limit.
func tooMany(w http.ResponseWriter) {
	w.Header().Set("Retry-After", "10")
	httpError(w, http.StatusTooManyRequests, "too many requests from your address: wait a little and try again")
}

// host returns the host registered under the request's code, or answers
// the request itself and returns nil.
func (s *Server) host(w http.ResponseWriter, r *http.Request) (coord.Code, *hostConn) {
	code, err := coord.ParseCode(r.PathValue("code"))
	if err != nil {
		s.m.lookups.WithLabelValues("bad").Inc()
		httpError(w, http.StatusBadRequest, err.Error())
		return "", nil
	}
	s.mu.Lock()
	h := s.hosts[code]
	s.mu.Unlock()
	if h == nil {
		s.m.lookups.WithLabelValues("unknown").Inc()
		httpError(w, http.StatusNotFound, "no host is registered as "+string(code)+
			": check the code, and ask your friend whether their host is running")
		return code, nil
	}
	return code, h
}

// serveLookup answers a joiner's lookup: how the host may be reached,
// and TURN credentials.
func (s *Server) serveLookup(w http.ResponseWriter, r *http.Request) {
	if !s.lookups.allow(r) {
		s.m.lookups.WithLabelValues("limited").Inc()
		tooMany(w)
		return
	}
	code, h := s.host(w, r)
	if h == nil {
		return
	}
	s.m.lookups.WithLabelValues("found").Inc()
	reply := coord.LookupReply{Code: code, Reach: h.reachNow(), TURN: turnFor(&s.cfg, randomID(), time.Now())}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	b, _ := json.Marshal(reply)
	w.Write(append(b, '\n'))
}

// serveReport counts a joiner's outcome.
func (s *Server) serveReport(w http.ResponseWriter, r *http.Request) {
	if !s.lookups.allow(r) {
		tooMany(w)
		return
	}
	b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 1024))
	if err != nil {
		httpError(w, http.StatusBadRequest, "report: "+err.Error())
		return
	}
	rep, err := coord.DecodeReport(b)
	if err != nil {
		httpError(w, http.StatusBadRequest, err.Error())
		return
	}
	s.m.attempts.WithLabelValues(rep.Outcome).Inc()
	s.m.connectTime.WithLabelValues(rep.Outcome).Observe(float64(rep.Millis) / 1000)
	w.WriteHeader(http.StatusNoContent)
}

// accept upgrades a request to a WebSocket whose messages are at most
// coord.MaxMessage bytes.
func accept(w http.ResponseWriter, r *http.Request) (*websocket.Conn, error) {
	c, err := websocket.Accept(w, r, &websocket.AcceptOptions{CompressionMode: websocket.CompressionDisabled})
	if err != nil {
		return nil, err
	}
	c.SetReadLimit(coord.MaxMessage)
	return c, nil
}

// randomID is 9 random bytes as base64url: attempt IDs, TURN user IDs.
func randomID() string {
	b := make([]byte, 9)
	rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}
