package host

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/lockhost/lockhost/host/gate"
	"github.com/lockhost/lockhost/internal/addrkey"
	"github.com/lockhost/lockhost/lockstep"
	"github.com/lockhost/lockhost/saves"
	"github.com/lockhost/lockhost/wire"
)

// Server hosts one session on a listener.
type Server struct {
	cfg     Config
	sess    *session
	limiter *gate.ConnRate
	pending *gate.Pending    // connections not admitted yet
	guesses *gate.Guesses    // password attempts
	refusal *gate.RefusalLog // refusals of unadmitted connections, aggregated
	nextID  atomic.Int32
	conns   sync.WaitGroup
	sent    atomic.Uint64 // bytes written to every connection
	uplink  *uplink       // paces world transfers and gives out their slots
}

// New returns a server for sim. cfg is completed with Defaults and
// validated.
func New(cfg Config, content Content, sim lockstep.Sim) (*Server, error) {
	cfg = cfg.Defaults()
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("host config: %w", err)
	}
	if sim == nil {
		return nil, errors.New("host: no simulation")
	}
	// The game version and mods go to every joiner in Server_ModList: a
	// host that could not send them would fail every handshake.
	if err := (&wire.ServerModList{GameVersion: content.GameVersion, Mods: content.Mods}).Validate(); err != nil {
		return nil, fmt.Errorf("host content: %w", err)
	}
	bans, err := loadBans(cfg.Admission.BanFile)
	if err != nil {
		return nil, err
	}
	sess := newSession(cfg, sim)
	sess.admin.bans = bans
	sess.defs.Store(newHostDefs(content))
	srv := &Server{cfg: cfg, sess: sess, limiter: gate.NewConnRate(cfg.Admission.ConnRate, cfg.Admission.ConnBurst),
		pending: gate.NewPending(cfg.Admission.MaxPending, cfg.Admission.MaxPendingPerAddr, cfg.Admission.MaxPendingPerPrefix),
		guesses: gate.NewGuesses(cfg.Admission.PasswordRate, cfg.Admission.PasswordBurst,
			cfg.Admission.PasswordRateAll, cfg.Admission.PasswordBurstAll, cfg.Admission.PasswordPuzzleMaxBits),
		refusal: gate.NewRefusalLog(cfg.Logger, cfg.Admission.RefusalLogEvery),
		uplink:  newUplink(cfg.Join.MaxUploadRate, cfg.Join.MaxUploadSlots, cfg.Join.SlotShareWindow)}
	if content.Share != nil {
		gateContent(content.Share, srv.uplink)
	}
	sess.lastID = &srv.nextID
	sess.uplink = srv.uplink
	sess.pub.sent = &srv.sent
	if cfg.Save.Path != "" {
		sess.tokenFile = newTokenFile(saves.TokensPath(cfg.Save.Path), cfg.Logger)
		// Player IDs go on above the restored ones: nobody new takes a
		// returning player's ID, nor its faction.
		srv.nextID.Store(sess.restoreTokens(time.Now()))
	}
	return srv, nil
}

// Serve runs the session and accepts clients on ln until ctx is done, then
// tells every client the host is closing, closes ln and waits for the
// connections to finish.
//
// ln is the transport seam: any net.Listener whose connections carry the
// protocol's frames as a byte stream (TCP, a WebSocket upgrade wrapped as
// a net.Conn, one end of a net.Pipe) gets the same handshake, deadlines,
// admission and limits. The per-address limits key on each connection's
// RemoteAddr: its AddrPort method where it has one (as *net.TCPAddr
// has), else the host part of its "host:port" text, else the whole text.
// A transport that accepts for others (a proxy) must give the client's
// own address there, or every client counts as one.
//
// Serve starts the session, so it is called once per Server; to take
// players on several listeners at once (the game port and a WebSocket
// listener), give them to ServeListeners (Listeners.Extra), which serves
// them all through one Serve.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	s.sess.admin.serving(cancel)
	go s.sess.run(ctx)
	go func() {
		<-ctx.Done()
		ln.Close()
	}()
	go func() {
		t := time.NewTicker(s.cfg.Admission.RefusalLogEvery)
		defer t.Stop()
		for {
			select {
			case now := <-t.C:
				s.refusal.Flush(now)
			case <-ctx.Done():
				return
			}
		}
	}()
	s.cfg.Logger.Info("hosting", "addr", ln.Addr().String(), "game", s.cfg.GameName, "tick_rate", s.cfg.TickRate)
	var err error
	var backoff time.Duration
	for {
		nc, aerr := ln.Accept()
		if aerr != nil {
			if ctx.Err() != nil {
				break
			}
			if !temporary(aerr) {
				err = fmt.Errorf("accept: %w", aerr)
				break
			}
			// Out of descriptors (or a connection reset before it was
			// accepted): the players already in are fine, so wait and try
			// again, as net/http does, rather than end the session.
			backoff = min(max(2*backoff, acceptBackoffMin), acceptBackoffMax)
			s.cfg.Logger.Warn("accept failed; retrying", "err", aerr, "retry_in_ms", backoff.Milliseconds())
			t := time.NewTimer(backoff)
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
			}
			continue
		}
		backoff = 0
		s.conns.Add(1)
		key, prefix := limitKeys(nc) // an IPv6 address counts by its /64
		if !s.limiter.Allow(key, time.Now()) {
			go func() {
				defer s.conns.Done()
				s.refuseFast(nc, wire.ReasonRateLimited)
			}()
			continue
		}
		// A full pending table makes room by closing the connection that
		// has done least for longest (package gate); an address penalized
		// for stalling is refused.
		pc := s.pending.AcquireKeyed(key, prefix, time.Now(), func() { nc.Close() })
		if pc == nil {
			go func() {
				defer s.conns.Done()
				s.refuseFast(nc, wire.ReasonRateLimited)
			}()
			continue
		}
		go func() {
			defer s.conns.Done()
			s.handle(ctx, nc, pc)
		}()
	}
	cancel()
	<-s.sess.done
	s.conns.Wait()
	s.refusal.Flush(time.Now().Add(s.cfg.Admission.RefusalLogEvery)) // the last summaries
	return err
}

// The accept loop's wait after a temporary error doubles from
// acceptBackoffMin up to acceptBackoffMax.
const (
	acceptBackoffMin = 5 * time.Millisecond
	acceptBackoffMax = time.Second
)

// temporary reports whether an accept error may go away by itself: out of
// file descriptors or memory, or a connection aborted before it was
// accepted.
func temporary(err error) bool {
	for _, e := range []syscall.Errno{syscall.EMFILE, syscall.ENFILE, syscall.ENOBUFS, syscall.ENOMEM, syscall.ECONNABORTED, syscall.ECONNRESET} {
		if errors.Is(err, e) {
			return true
		}
	}
	var te interface{ Temporary() bool }
	return errors.As(err, &te) && te.Temporary()
}

// ListenAndServe listens on addr (TCP for players, UDP on the same port
// number for status queries) and serves until ctx is done.
func (s *Server) ListenAndServe(ctx context.Context, addr string) error {
	ls, err := Listen(addr)
	if err != nil {
		return err
	}
	return s.ServeListeners(ctx, ls)
}

// Listeners are a host's game port: TCP for players and UDP on the same
// port number for status queries, and any other transports players
// connect through. A tool opens them with Listen before it generates or
// loads a world, so a busy port fails at once.
type Listeners struct {
	// TCP is where players connect: any net.Listener (see Serve).
	TCP net.Listener
	// UDP answers status queries; nil serves none.
	UDP net.PacketConn
	// Discovery answer LAN discovery probes (package transport/lan,
	// opened by lan.Listen) with TCP's port; none answers none. A host on
	// a loopback address answers only probes from loopback.
	Discovery []net.PacketConn
	// Extra are more listeners players connect through (a WebSocket
	// listener on the HTTP port, say), served by the same session and
	// accept path as TCP, with the same admission and limits: a
	// connection counts against its RemoteAddr's limits whichever
	// listener took it.
	Extra []net.Listener
}

// Listen opens the game port on addr, TCP and UDP.
func Listen(addr string) (*Listeners, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen: %w", err)
	}
	pc, err := listenStatus(ln)
	if err != nil {
		ln.Close()
		return nil, err
	}
	return &Listeners{TCP: ln, UDP: pc}, nil
}

// Addr is the address players connect to.
func (ls *Listeners) Addr() net.Addr { return ls.TCP.Addr() }

// Close closes them all; it is for a tool that ends before serving on
// them.
func (ls *Listeners) Close() {
	ls.TCP.Close()
	if ls.UDP != nil {
		ls.UDP.Close()
	}
	for _, ln := range ls.Extra {
		ln.Close()
	}
	for _, pc := range ls.Discovery {
		pc.Close()
	}
}

// players is the one listener Serve accepts players on: TCP, merged with
// the extra listeners if there are any.
func (ls *Listeners) players() net.Listener {
	if len(ls.Extra) == 0 {
		return ls.TCP
	}
	return mergeListeners(append([]net.Listener{ls.TCP}, ls.Extra...)...)
}

// ServeListeners serves players and status queries on ls until ctx is
// done or the session ends (an admin shutdown), then closes ls, extra
// listeners included. It runs one session whatever the number of
// listeners: Serve, which starts the session, is called once, on all the
// player listeners merged.
func (s *Server) ServeListeners(ctx context.Context, ls *Listeners) error {
	ctx, cancel := context.WithCancel(ctx)
	var side sync.WaitGroup
	if ls.UDP != nil {
		side.Go(func() {
			if err := s.ServeStatus(ctx, ls.UDP); err != nil {
				s.cfg.Logger.Error("status queries", "err", err)
			}
		})
	}
	s.serveDiscovery(ctx, &side, ls)
	err := s.Serve(ctx, ls.players())
	// The status queries and discovery end with the session, whatever
	// ended it (an admin shutdown ends the session without ctx): they
	// stop first and their sockets are closed after, so their closing is
	// no error.
	cancel()
	side.Wait()
	if ls.UDP != nil {
		ls.UDP.Close()
	}
	for _, pc := range ls.Discovery {
		pc.Close()
	}
	return err
}

// Submit hands a command to the session as if from player (use 0 for the
// host itself). It returns false once the session has ended.
func (s *Server) Submit(player int32, c lockstep.Command) bool {
	c.Player = player
	return s.sess.submitCommand(c)
}

// remoteIP is the address a connection comes from, without the port:
// see Serve.
func remoteIP(nc net.Conn) string {
	if ap, ok := nc.RemoteAddr().(interface{ AddrPort() netip.AddrPort }); ok {
		if a := ap.AddrPort().Addr(); a.IsValid() {
			return a.Unmap().WithZone("").String()
		}
	}
	host, _, err := net.SplitHostPort(nc.RemoteAddr().String())
	if err != nil {
		return nc.RemoteAddr().String()
	}
	return host
}

// Relayed is what the host asks of a connection that may have come
// through a relay shared by many joiners (a TURN server, through
// transport/coordice): Relayed says its RemoteAddr is the relay's
// address and a port that is this joiner's alone.
type Relayed interface {
	Relayed() bool
}

// Pathed is what the host asks of a connection that knows the way it
// came (transport/coordice's: "direct", "punched", "turn-udp", ...).
type Pathed interface {
	Path() string
}

// limitKeys are the keys a connection's per-address limits (connection
// rate, pending connections) and per-network cap count it under: its
// address (an IPv6 one by its /64) and its network. A relayed
// connection counts under the relay's address and port, one per joiner,
// and the relay's network, which caps them together.
func limitKeys(nc net.Conn) (addr, prefix string) {
	ip := remoteIP(nc)
	if r, ok := nc.(Relayed); ok && r.Relayed() {
		return "relay " + nc.RemoteAddr().String(), addrkey.Prefix(ip)
	}
	return addrKey(ip), addrkey.Prefix(ip)
}

// connPath names the way nc came, as the status page shows it: its own
// Path where it has one, else "lan" from a private, loopback or
// link-local address and "direct" from any other.
func connPath(nc net.Conn) string {
	if p, ok := nc.(Pathed); ok {
		return p.Path()
	}
	a, err := netip.ParseAddr(remoteIP(nc))
	if err != nil {
		return "direct"
	}
	if a.IsPrivate() || a.IsLoopback() || a.IsLinkLocalUnicast() {
		return "lan"
	}
	return "direct"
}

// secure runs the TLS handshake on a new connection when the host speaks
// TLS, within timeout; it returns the connection to speak the protocol on.
func (s *Server) secure(ctx context.Context, nc net.Conn, timeout time.Duration) (net.Conn, error) {
	if s.cfg.Admission.TLS == nil {
		return nc, nil
	}
	tc := tls.Server(nc, s.cfg.Admission.TLS)
	hctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if err := tc.HandshakeContext(hctx); err != nil {
		return nil, err
	}
	return tc, nil
}

// refuseFast turns a connection away before any handshake, spending at
// most a few seconds on it.
func (s *Server) refuseFast(nc net.Conn, r wire.Reason) {
	defer nc.Close()
	s.sess.pub.history.join(JoinRecord{At: time.Now(), Remote: nc.RemoteAddr().String(), Outcome: JoinRefused, Reason: r.String()})
	tc, err := s.secure(context.Background(), nc, 2*time.Second)
	if err != nil {
		return // not worth more: it is refused anyway
	}
	nc = tc
	s.refusal.Refused(time.Now(), addrKey(remoteIP(nc)), "client refused", r.String(), "remote", nc.RemoteAddr().String(), "reason", r.String())
	frame := wire.MustMarshal(&wire.ServerDisconnect{Reason: r, Message: r.Sentence()})
	if sendFinal(nc, frame) {
		s.sent.Add(uint64(len(frame)))
	}
}

// addrKey is the key an address is counted under (package addrkey): an
// IPv4 address by itself, an IPv6 address by its /64.
func addrKey(ip string) string { return addrkey.Of(ip) }
