package coordserver

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"github.com/lockhost/lockhost/transport/coord"
	"net/http"
	"sync"
	"time"

	"github.com/coder/websocket"
)

// hostConn is one registered host: its WebSocket's outgoing queue, how it
// may be reached, and its open signalling attempts. The handler's
// goroutine reads; writer writes.
type hostConn struct {
	code   coord.Code
	key    string // the host's public key, as register carries it
	nonce  string // the connection's challenge
	out    chan coord.Msg
	cancel context.CancelFunc // ends the host's connection

	mu       sync.Mutex
	reach    coord.Reach
	closed   bool
	attempts map[string]*attempt
}

// attempt is one joiner's signalling attempt: its WebSocket's outgoing
// queue.
type attempt struct {
	id     string
	out    chan coord.Msg
	cancel context.CancelFunc

	once   sync.Once
	closed bool // under the host's mu
}

// send queues m for the host, or ends the host's connection if its queue
// is full (a host that does not read). It reports whether m was queued.
func (h *hostConn) send(m coord.Msg) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return false
	}
	select {
	case h.out <- m:
		return true
	default:
		h.cancel()
		return false
	}
}

// reachNow is the host's reach as registered last.
func (h *hostConn) reachNow() coord.Reach {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.reach
}

// toJoiner queues m for attempt id's joiner; a close ends the attempt.
func (h *hostConn) toJoiner(id string, m coord.Msg) {
	h.mu.Lock()
	defer h.mu.Unlock()
	a := h.attempts[id]
	if a == nil || a.closed {
		return
	}
	select {
	case a.out <- m:
	default:
		a.cancel()
	}
}

// serveHost takes a host's registration and keeps its connection: pings,
// new reach, signalling to and from joiners.
func (s *Server) serveHost(w http.ResponseWriter, r *http.Request) {
	if !s.registers.allow(r) {
		s.m.registrations.WithLabelValues("limited").Inc()
		tooMany(w)
		return
	}
	c, err := accept(w, r)
	if err != nil {
		return
	}
	defer c.CloseNow()
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	nonce, first, pub, err := s.challenge(ctx, c)
	if err != nil {
		s.m.registrations.WithLabelValues("refused").Inc()
		c.Close(websocket.StatusPolicyViolation, coord.CloseReason(err.Error()))
		return
	}
	h := &hostConn{code: coord.CodeOf(pub), key: first.Key, nonce: nonce, out: make(chan coord.Msg, coord.QueueLen), cancel: cancel,
		reach: first.Reach, attempts: map[string]*attempt{}}
	if err := s.install(h); err != nil {
		s.m.registrations.WithLabelValues("refused").Inc()
		c.Close(websocket.StatusTryAgainLater, coord.CloseReason(err.Error()))
		return
	}
	s.m.registrations.WithLabelValues("ok").Inc()
	s.cfg.Logger.Info("host registered", "code", h.code, "from", r.RemoteAddr, "addrs", first.Addrs, "lan", first.LAN)
	written := make(chan struct{})
	go coord.WriteLoop(c, h.out, written)
	h.send(coord.Msg{Type: coord.TypeRegistered, Code: h.code, TURN: turnFor(&s.cfg, string(h.code[1:]), time.Now())})
	err = s.readHost(ctx, c, h)
	s.remove(h)
	close(h.out)
	<-written
	s.cfg.Logger.Info("host gone", "code", h.code, "err", err)
	c.Close(websocket.StatusNormalClosure, "")
}

// readHost reads the host's messages until it goes quiet, errs or is
// replaced.
func (s *Server) readHost(ctx context.Context, c *websocket.Conn, h *hostConn) error {
	for {
		m, err := coord.ReadMsg(ctx, c, s.cfg.HostTimeout)
		if err != nil {
			return err
		}
		switch m.Type {
		case coord.TypePing:
			h.send(coord.Msg{Type: coord.TypePong})
		case coord.TypeRegister:
			if _, err := coord.VerifyRegister(m, h.nonce); err != nil || m.Key != h.key {
				return errors.New("a register with another key")
			}
			h.mu.Lock()
			h.reach = m.Reach
			h.mu.Unlock()
			// Fresh TURN credentials: a host that stays registered longer
			// than they last registers again to renew them.
			h.send(coord.Msg{Type: coord.TypeRegistered, Code: h.code, TURN: turnFor(&s.cfg, string(h.code[1:]), time.Now())})
		case coord.TypeSignal:
			h.toJoiner(m.Attempt, coord.Msg{Type: coord.TypeSignal, Blob: m.Blob})
		case coord.TypeClose:
			h.toJoiner(m.Attempt, coord.Msg{Type: coord.TypeClose, Reason: m.Reason})
		default:
			return errors.New("unexpected " + m.Type)
		}
	}
}

// challenge sends the connection's challenge and reads the host's
// register, which must sign it.
func (s *Server) challenge(ctx context.Context, c *websocket.Conn) (nonce string, first coord.Msg, pub ed25519.PublicKey, err error) {
	b := make([]byte, coord.NonceLen)
	rand.Read(b)
	nonce = base64.RawURLEncoding.EncodeToString(b)
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	err = c.Write(wctx, websocket.MessageText, coord.EncodeMsg(coord.Msg{Type: coord.TypeChallenge, Nonce: nonce}))
	cancel()
	if err != nil {
		return "", coord.Msg{}, nil, err
	}
	if first, err = coord.ReadMsg(ctx, c, 10*time.Second); err != nil {
		return "", coord.Msg{}, nil, err
	}
	if first.Type != coord.TypeRegister {
		return "", coord.Msg{}, nil, errors.New("the first message is not register")
	}
	pub, err = coord.VerifyRegister(first, nonce)
	return nonce, first, pub, err
}

// install puts h in the table, replacing an older connection with the
// same key (a host reconnecting before the coordinator noticed its old
// connection died); a code another key holds is refused.
func (s *Server) install(h *hostConn) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.owners.claim(h.code, h.key, time.Now()); err != nil {
		return err
	}
	if old := s.hosts[h.code]; old != nil {
		old.cancel()
	} else if len(s.hosts) >= s.cfg.MaxHosts {
		return errors.New("the coordinator is full: try again later")
	}
	s.hosts[h.code] = h
	return nil
}

// remove takes h out of the table (unless a newer connection replaced
// it) and ends its attempts.
func (s *Server) remove(h *hostConn) {
	s.mu.Lock()
	if s.hosts[h.code] == h {
		delete(s.hosts, h.code)
	}
	s.mu.Unlock()
	s.owners.seen(h.code, h.key, time.Now())
	h.mu.Lock()
	h.closed = true
	for _, a := range h.attempts {
		a.cancel()
	}
	h.mu.Unlock()
}

// serveSignal carries one joiner's signalling attempt: its blobs to the
// host and the host's back, until either closes or AttemptTimeout.
func (s *Server) serveSignal(w http.ResponseWriter, r *http.Request) {
	if !s.lookups.allow(r) {
		s.m.signals.WithLabelValues("limited").Inc()
		tooMany(w)
		return
	}
	_, h := s.host(w, r)
	if h == nil {
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), s.cfg.AttemptTimeout)
	defer cancel()
	a := &attempt{id: randomID(), out: make(chan coord.Msg, coord.QueueLen), cancel: cancel}
	if !s.open(h, a) {
		s.m.signals.WithLabelValues("busy").Inc()
		httpError(w, http.StatusServiceUnavailable, "the host has too many connection attempts under way: try again in a moment")
		return
	}
	defer s.shut(h, a)
	c, err := accept(w, r)
	if err != nil {
		return
	}
	defer c.CloseNow()
	s.m.signals.WithLabelValues("opened").Inc()
	written := make(chan struct{})
	go coord.WriteLoop(c, a.out, written)
	defer func() { <-written }()
	defer s.shut(h, a) // closes a.out before the writer is waited for
	for {
		m, err := coord.ReadMsg(ctx, c, s.cfg.AttemptTimeout)
		if err != nil {
			return
		}
		switch m.Type {
		case coord.TypeSignal:
			h.send(coord.Msg{Type: coord.TypeSignal, Attempt: a.id, Blob: m.Blob})
		case coord.TypeClose:
			return
		default:
			return
		}
	}
}

// open adds attempt a to host h, unless it has MaxAttempts open.
func (s *Server) open(h *hostConn, a *attempt) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed || len(h.attempts) >= s.cfg.MaxAttempts {
		return false
	}
	h.attempts[a.id] = a
	return true
}

// shut ends attempt a once: the host is told, its queue closed.
func (s *Server) shut(h *hostConn, a *attempt) {
	a.once.Do(func() {
		h.mu.Lock()
		delete(h.attempts, a.id)
		a.closed = true
		close(a.out)
		h.mu.Unlock()
		h.send(coord.Msg{Type: coord.TypeClose, Attempt: a.id})
	})
}

// dropHosts ends every host's connection, as a coordinator's restart
// would (for tests).
func (s *Server) dropHosts() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, h := range s.hosts {
		h.cancel()
	}
}
