package coord

import (
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/coder/websocket"
)

// HostConfig configures a host's registration. Coordinator and Secret are
// required; the zero value of every other field works.
type HostConfig struct {
	// Coordinator is where to register.
	Coordinator *Coordinator
	// Secret proves the host owns its code (LoadOrCreateSecret).
	Secret []byte
	// Reach, if set, says how the host may be reached now; it is asked at
	// each registration and after Update.
	Reach func() Reach
	// OnRegistered, if set, is called after each registration the
	// coordinator accepted, with the TURN servers it offers (nil: none).
	OnRegistered func(code Code, turn *TURN)
	// OnSignal, if set, takes a joiner's signalling attempt, on its own
	// goroutine: the ICE path plugs in here. ctx ends with the
	// registration. Without it, attempts are closed at once.
	OnSignal func(ctx context.Context, s Signal, turn *TURN)
	// Logger receives the registration's log (default: discarded).
	Logger *slog.Logger
	// Ping is how often the host pings the coordinator (default 20 s); a
	// connection that hears nothing for three pings is redialled.
	Ping time.Duration
	// MinBackoff and MaxBackoff bound the wait before redialling a lost
	// or refused connection, doubled after each failure (defaults 1 s and
	// 1 min), with up to a quarter more at random.
	MinBackoff, MaxBackoff time.Duration
}

// Host is a host's registration with a coordinator, kept until its
// context ends.
type Host struct {
	cfg    HostConfig
	code   Code
	key    ed25519.PrivateKey
	update chan struct{}
	done   chan struct{}

	mu       sync.Mutex
	nonce    string   // the connection's challenge
	out      chan Msg // the connection's queue; nil between connections
	turn     *TURN
	attempts map[string]*hostSignal
}

// Register keeps the host registered with the coordinator until ctx
// ends, redialling with backoff when the connection drops.
func Register(ctx context.Context, cfg HostConfig) *Host {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Reach == nil {
		cfg.Reach = func() Reach { return Reach{} }
	}
	if cfg.Ping <= 0 {
		cfg.Ping = 20 * time.Second
	}
	if cfg.MinBackoff <= 0 {
		cfg.MinBackoff = time.Second
	}
	if cfg.MaxBackoff <= 0 {
		cfg.MaxBackoff = time.Minute
	}
	h := &Host{cfg: cfg, code: CodeOfSecret(cfg.Secret), key: KeyOf(cfg.Secret), update: make(chan struct{}, 1), done: make(chan struct{}),
		attempts: map[string]*hostSignal{}}
	go h.run(ctx)
	return h
}

// Code is the host's invite code (derived from its secret).
func (h *Host) Code() Code { return h.code }

// TURN is the TURN servers and credentials of the coordinator's last
// registered reply (nil: none), as each signalling attempt gets them.
func (h *Host) TURN() *TURN {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.turn
}

// Done is closed when the registration has stopped.
func (h *Host) Done() <-chan struct{} { return h.done }

// Update sends the host's reach again, once it changed (a router mapped
// the port).
func (h *Host) Update() {
	select {
	case h.update <- struct{}{}:
	default:
	}
}

// run registers, and registers again after each failure, until ctx ends.
func (h *Host) run(ctx context.Context) {
	defer close(h.done)
	backoff := h.cfg.MinBackoff
	for ctx.Err() == nil {
		registered, err := h.session(ctx)
		if ctx.Err() != nil {
			return
		}
		if registered {
			backoff = h.cfg.MinBackoff
		}
		wait := backoff + rand.N(backoff/4+1)
		h.cfg.Logger.Warn("coordinator: connection lost, dialling again", "err", err, "in", wait.Round(time.Millisecond))
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		backoff = min(backoff*2, h.cfg.MaxBackoff)
	}
}

// registerMsg is the host's register message with its reach now,
// signing the connection's challenge.
func (h *Host) registerMsg(nonce string) Msg {
	return Msg{Type: TypeRegister, Key: base64.RawURLEncoding.EncodeToString(h.key.Public().(ed25519.PublicKey)),
		Sig: base64.RawURLEncoding.EncodeToString(ed25519.Sign(h.key, []byte(SignContext+nonce))), Reach: h.cfg.Reach()}
}

// session is one connection: register, then keep it until it fails.
func (h *Host) session(ctx context.Context) (registered bool, err error) {
	dctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	c, err := h.cfg.Coordinator.dialWS(dctx, PathHost)
	cancel()
	if err != nil {
		return false, err
	}
	defer c.CloseNow()
	sctx, stop := context.WithCancel(ctx)
	defer stop()
	out := make(chan Msg, QueueLen)
	written := make(chan struct{})
	go WriteLoop(c, out, written)
	defer func() {
		h.mu.Lock()
		h.out = nil
		close(out)
		h.mu.Unlock()
		<-written
		h.endAll()
	}()
	ch, err := ReadMsg(sctx, c, 15*time.Second)
	if err == nil && ch.Type != TypeChallenge {
		err = fmt.Errorf("coordinator: %q before a challenge", ch.Type)
	}
	if err != nil {
		return false, closeErr(err)
	}
	out <- h.registerMsg(ch.Nonce)
	first, err := ReadMsg(sctx, c, 15*time.Second)
	if err != nil {
		return false, closeErr(err)
	}
	if first.Type != TypeRegistered || first.Code != h.code {
		return false, fmt.Errorf("coordinator: the reply to register is %q for %q", first.Type, first.Code)
	}
	h.mu.Lock()
	h.out, h.turn, h.nonce = out, first.TURN, ch.Nonce
	h.mu.Unlock()
	if h.cfg.OnRegistered != nil {
		h.cfg.OnRegistered(h.code, first.TURN)
	}
	go h.keepalive(sctx, renewEvery(first.TURN))
	return true, closeErr(h.read(sctx, c))
}

// renewEvery is how often a host registers again to renew the TURN
// credentials t (half their lifetime, at least a minute), or 0 when there
// are none.
func renewEvery(t *TURN) time.Duration {
	if t == nil || t.TTL <= 0 {
		return 0
	}
	return max(time.Duration(t.TTL)*time.Second/2, time.Minute)
}

// keepalive pings the coordinator and sends the reach again after
// Update, and every renew (0: never) to renew its TURN credentials,
// until ctx ends.
func (h *Host) keepalive(ctx context.Context, renew time.Duration) {
	t := time.NewTicker(h.cfg.Ping)
	defer t.Stop()
	var renewC <-chan time.Time
	if renew > 0 {
		r := time.NewTicker(renew)
		defer r.Stop()
		renewC = r.C
	}
	for {
		var m Msg
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			m = Msg{Type: TypePing}
		case <-renewC:
			h.mu.Lock()
			nonce := h.nonce
			h.mu.Unlock()
			m = h.registerMsg(nonce)
		case <-h.update:
			h.mu.Lock()
			nonce := h.nonce
			h.mu.Unlock()
			m = h.registerMsg(nonce)
		}
		if h.send(ctx, m) != nil {
			return
		}
	}
}

// read takes the coordinator's messages until the connection fails or
// stays quiet for three pings.
func (h *Host) read(ctx context.Context, c *websocket.Conn) error {
	for {
		m, err := ReadMsg(ctx, c, 3*h.cfg.Ping)
		if err != nil {
			return err
		}
		switch m.Type {
		case TypePong:
		case TypeRegistered: // the reply to a register again: fresh TURN credentials
			if m.Code == h.code {
				h.mu.Lock()
				h.turn = m.TURN
				h.mu.Unlock()
			}
		case TypeSignal:
			h.deliver(ctx, m.Attempt, m.Blob)
		case TypeClose:
			h.endAttempt(m.Attempt, false)
		case TypeError:
			return errors.New("coordinator: " + m.Reason)
		default:
			return fmt.Errorf("coordinator: unexpected %q", m.Type)
		}
	}
}

// deliver hands a joiner's blob to its attempt, opening the attempt (and
// calling OnSignal) on its first blob.
func (h *Host) deliver(ctx context.Context, id string, blob []byte) {
	if id == "" {
		return
	}
	h.mu.Lock()
	s := h.attempts[id]
	fresh := s == nil
	if fresh {
		if len(h.attempts) >= QueueLen {
			h.mu.Unlock()
			return
		}
		s = &hostSignal{id: id, host: h, in: make(chan []byte, QueueLen)}
		h.attempts[id] = s
	}
	turn := h.turn
	select {
	case s.in <- blob:
	default: // a handler that does not read: the attempt is lost
	}
	h.mu.Unlock()
	if !fresh {
		return
	}
	if h.cfg.OnSignal == nil {
		h.endAttempt(id, true)
		return
	}
	go h.cfg.OnSignal(ctx, s, turn)
}

// endAttempt closes attempt id's blobs; tell says the coordinator is to
// be told.
func (h *Host) endAttempt(id string, tell bool) {
	h.mu.Lock()
	s := h.attempts[id]
	delete(h.attempts, id)
	h.mu.Unlock()
	if s == nil {
		return
	}
	s.once.Do(func() { close(s.in) })
	if tell {
		h.send(context.Background(), Msg{Type: TypeClose, Attempt: id})
	}
}

// endAll ends every attempt, the connection being gone.
func (h *Host) endAll() {
	h.mu.Lock()
	ids := make([]string, 0, len(h.attempts))
	for id := range h.attempts {
		ids = append(ids, id)
	}
	h.mu.Unlock()
	for _, id := range ids {
		h.endAttempt(id, false)
	}
}

// send queues m on the current connection.
func (h *Host) send(_ context.Context, m Msg) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.out == nil {
		return errors.New("coordinator: not connected")
	}
	select {
	case h.out <- m:
		return nil
	default:
		return errors.New("coordinator: the connection's queue is full")
	}
}

// closeErr turns a WebSocket close with a reason into that reason.
func closeErr(err error) error {
	var ce websocket.CloseError
	if errors.As(err, &ce) && ce.Reason != "" {
		return fmt.Errorf("coordinator: %s", ce.Reason)
	}
	return err
}
