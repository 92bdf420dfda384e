package join

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lockhost/lockhost/join/jointest"
	"github.com/lockhost/lockhost/lockstep"
	"github.com/lockhost/lockhost/snapshot"
	"github.com/lockhost/lockhost/wire"
)

// Timings are how long each phase of a join took.
type Timings struct {
	Connect, Handshake, Download, Load, CatchUp, Total time.Duration
	// Bytes is the size of the downloaded payload; RawBytes the
	// decompressed state.
	Bytes, RawBytes uint64
	// Codec is what the world blob was compressed with.
	Codec snapshot.Codec
	// SnapshotTick is the join point's tick; ReadyTick the tick WorldReady
	// reported; CatchUpTicks the ticks simulated in between.
	SnapshotTick, ReadyTick, CatchUpTicks uint64
	// Rejoin is the host's answer to a rejoin from the world held
	// (Reconnector): wire.RejoinHeld when it replayed the commands
	// missed (nothing was downloaded; SnapshotTick is where the held
	// world stood), a fallback result when it sent the world, with
	// RejoinWhy its sentence; wire.RejoinNone when no held world was
	// named or the host did not answer the key.
	Rejoin    wire.RejoinResult
	RejoinWhy string
	// Sections is how many maps' regenerable sections the join named as
	// made (Config.Sections), so the host could send them thin; Thin how
	// many it did. SectionsWhy says why they were made or not (when the
	// join chose: not with Config.SectionsAlways), in a sentence.
	Sections, Thin int
	SectionsWhy    string
}

// CatchUpRate is ticks simulated per second during catch-up.
func (t Timings) CatchUpRate() float64 {
	if t.CatchUp <= 0 {
		return 0
	}
	return float64(t.CatchUpTicks) / t.CatchUp.Seconds()
}

// Session is a joined session.
type Session struct {
	cfg      Config
	opt      jointest.Options // test-only settings, from Join's context
	att      *attempt         // a Reconnector's record of this join, or nil
	nc       net.Conn
	in       chan inbound
	wmu      sync.Mutex
	follower *lockstep.Follower
	info     Info
	timings  Timings
	players  []wire.PlayerInfo // ascending ID
	ready    bool              // past WorldReady
	ackedAt  time.Time         // when the last tick report went out
	acked    uint64            // the tick it reported
	closed   chan struct{}
	once     sync.Once

	phaseMu   sync.Mutex // orders streaming and the read deadline against wake
	streaming bool       // the reader goroutine runs (after the handshake)

	lightTick uint64        // Light mode: the grant, taken as simulated
	tokenMu   sync.Mutex    // guards info and players once Run runs
	tok       *sessionToken // for a rejoin
	live      atomic.Bool   // past WorldReady: the reader applies the host timeout
	do        chan func(lockstep.Sim)

	hashEvery    uint64                                // checkpoint interval the host asked for (0: none)
	checkpointer atomic.Pointer[lockstep.Checkpointer] // hashes every map every time (nothing is taken on trust), off this goroutine when it can
	outHashes    []*wire.ClientHashes                  // reports taken, not yet sent
	resync       *resyncRecv                           // a repair being received
	uploads      []*uploadPending                      // relay mode: uploads the host asked this arbiter for, in order (arbiter.go)
	uploadQ      chan func()                           // the uploads being sent, one after the other
	uploadOnce   sync.Once
	checks       *checkLog          // the hash reports sent last, for a held-world rejoin (held.go)
	replayTo     uint64             // a held-world rejoin catches up to this grant
	replay       []*wire.ServerTick // the ticks it missed, from Server_Session
	sections     *sectionMaker      // the regenerable sections being made, or nil (sections.go)
	explain      *explainLog        // what it keeps to explain a desync, or nil (explain.go)
}

// Info is what the host said about the session during the handshake.
type Info struct {
	GameVersion string
	Mods        []string
	GameName    string
	PlayerID    int32
	Faction     int32
}

type inbound struct {
	p   wire.Packet
	err error
}

// Join connects to the host, runs the handshake, downloads the world,
// catches up and reports WorldReady. On success the session is live; call
// Run to follow it and Close when done.
func Join(ctx context.Context, cfg Config) (*Session, error) {
	return joinWith(ctx, cfg, nil)
}

// dial connects to cfg.Addr through cfg.Dial, or over TCP, within
// cfg.DialTimeout.
func dial(ctx context.Context, cfg Config) (net.Conn, error) {
	if cfg.Dial == nil {
		return (&net.Dialer{Timeout: max(cfg.DialTimeout, 0)}).DialContext(ctx, "tcp", cfg.Addr)
	}
	dctx, cancel := withTimeout(ctx, cfg.DialTimeout)
	defer cancel()
	return cfg.Dial(dctx, cfg.Addr)
}

// connect dials cfg.Addr and speaks TLS over the connection when
// cfg.TLS is set.
func connect(ctx context.Context, cfg Config) (net.Conn, error) {
	nc, err := dial(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("connect to %s: %w", cfg.Addr, err)
	}
	if cfg.TLS != nil {
		tc := tls.Client(nc, cfg.TLS)
		hctx, cancel := withTimeout(ctx, cfg.HandshakeTimeout)
		err := tc.HandshakeContext(hctx)
		cancel()
		if err != nil {
			nc.Close()
			return nil, fmt.Errorf("TLS with %s: %w", cfg.Addr, err)
		}
		nc = tc
	}
	return nc, nil
}

// attempt is what a Reconnector learns of a failed join: whether the
// host answered (sent its first packet).
type attempt struct{ answered bool }

// joinWith is Join, noting in att (if not nil) how far the join came.
func joinWith(ctx context.Context, cfg Config, att *attempt) (*Session, error) {
	cfg = cfg.Defaults()
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("join config: %w", err)
	}
	start := time.Now()
	report(cfg, PhaseConnect, 0, 0)
	opt := jointest.From(ctx)
	nc, err := connect(ctx, cfg)
	if err != nil {
		return nil, err
	}
	s := &Session{cfg: cfg, opt: opt, att: att, tok: &sessionToken{}, nc: nc, in: make(chan inbound, 1024), closed: make(chan struct{}), do: make(chan func(lockstep.Sim), 64),
		checks: &checkLog{}}
	if cfg.held != nil {
		s.checks = cfg.held.checks
	}
	s.timings.Connect = time.Since(start)
	woken := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		defer close(woken)
		s.wake()
	})
	err = s.join(ctx, start)
	if !stop() && err != nil {
		<-woken
	}
	if err != nil {
		if ctx.Err() != nil {
			// Stopped on purpose: the host is told, so it counts a leave
			// and not a lost connection.
			s.abandon()
			return nil, ctx.Err()
		}
		s.Close()
		return nil, err
	}
	return s, nil
}

// wake makes a join that ctx stopped return: a handshake read waiting on
// the connection ends at once (a download waits on ctx itself, and its
// reader must go on reading for abandon).
func (s *Session) wake() {
	s.phaseMu.Lock()
	defer s.phaseMu.Unlock()
	if !s.streaming {
		_ = s.nc.SetReadDeadline(time.Now())
	}
}

// abandon ends a join stopped before WorldReady as Leave ends a session:
// it sends Client_Leave, waits up to leaveWait for the host to hang up
// (reading what still arrives, so the leave is not lost to a reset) and
// closes the connection. Call it only from the goroutine that ran join.
func (s *Session) abandon() {
	defer s.Close()
	if err := s.writeWithin(&wire.ClientLeave{Why: "the joiner was stopped"}, leaveWait); err != nil {
		return
	}
	s.phaseMu.Lock()
	streaming := s.streaming
	s.phaseMu.Unlock()
	if !streaming {
		// Nobody else reads: read here, and throw away, until the host
		// hangs up.
		_ = s.nc.SetReadDeadline(time.Now().Add(leaveWait))
		_, _ = io.Copy(io.Discard, s.nc)
		return
	}
	s.awaitHangUp()
}

func report(cfg Config, ph Phase, done, total uint64) {
	if cfg.Progress != nil {
		cfg.Progress(Progress{Phase: ph, Done: done, Total: total})
	}
}

// Info returns what the host announced. Safe from any goroutine.
func (s *Session) Info() Info {
	s.tokenMu.Lock()
	defer s.tokenMu.Unlock()
	return s.info
}

// Timings returns the phase timings of the join.
func (s *Session) Timings() Timings { return s.timings }

// Close ends the session.
func (s *Session) Close() {
	s.once.Do(func() {
		close(s.closed)
		s.nc.Close()
		s.tok.end()
	})
	if c := s.checkpointer.Load(); c != nil {
		c.Close()
	}
}

// writeTimeout bounds one write to the host.
const writeTimeout = 15 * time.Second

func (s *Session) write(p wire.Packet) error { return s.writeWithin(p, writeTimeout) }

// writeWithin sends p, giving up after d.
func (s *Session) writeWithin(p wire.Packet, d time.Duration) error {
	b, err := wire.Marshal(nil, p)
	if err != nil {
		return err
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	_ = s.nc.SetWriteDeadline(time.Now().Add(d))
	if _, err := s.nc.Write(b); err != nil {
		return fmt.Errorf("send %s: %w", p.ID(), err)
	}
	return nil
}

// Send asks the host to run a command. It is safe to call from any
// goroutine.
func (s *Session) Send(mapID int32, kind uint16, payload []byte) error {
	return s.write(&wire.ClientCommand{MapID: mapID, Kind: kind, Payload: payload})
}

// join runs the phases up to WorldReady: the handshake on this
// goroutine, then, with the reader started, the download and the
// catch-up.
func (s *Session) join(ctx context.Context, start time.Time) error {
	fr, err := s.handshake(ctx)
	if err != nil {
		return err
	}
	// From here the host streams: read on a goroutine, simulate here.
	s.phaseMu.Lock()
	if ctx.Err() != nil {
		s.phaseMu.Unlock()
		return ctx.Err()
	}
	s.streaming = true
	_ = s.nc.SetReadDeadline(deadline(s.cfg.ReadyTimeout))
	s.phaseMu.Unlock()
	go s.readLoop(fr)
	w, err := s.download(ctx)
	if wr := (*worldRequest)(nil); errors.As(err, &wr) {
		return s.uploadWorld(ctx, start, wr.req)
	}
	if errors.Is(err, errReplayed) {
		return s.catchUpHeld(ctx, start)
	}
	if err != nil {
		return err
	}
	if err := s.catchUp(ctx, w); err != nil {
		return err
	}
	s.timings.Total = time.Since(start)
	return nil
}

// readLoop is the reader goroutine: it answers the echoes itself and
// queues every other packet (or the error that ended the reading) for
// the phase that runs.
func (s *Session) readLoop(fr *wire.FrameReader) {
	echoes := s.echoes()
	for {
		p, err := s.readNext(fr)
		if err == nil {
			if echo, ok := echoes[p.ID()]; ok {
				if err = echo(p); err == nil {
					continue
				}
			}
		}
		select {
		case s.in <- inbound{p: p, err: err}:
		case <-s.closed:
			return
		}
		if err != nil {
			return
		}
	}
}

// readNext reads and decodes the next packet; the host ending the
// session is a *RejectedError.
func (s *Session) readNext(fr *wire.FrameReader) (wire.Packet, error) {
	if s.live.Load() {
		// In the session, the host sends at least a keepalive every
		// second: silence this long means it is gone.
		_ = s.nc.SetReadDeadline(deadline(s.cfg.HostTimeout))
	}
	id, body, err := fr.Next()
	if errors.Is(err, os.ErrDeadlineExceeded) && s.live.Load() {
		return nil, fmt.Errorf("the host went silent (nothing for %v): %w", s.cfg.HostTimeout, err)
	}
	if err != nil {
		return nil, err
	}
	return decodeFromHost(id, body)
}

// recv waits for the next packet.
func (s *Session) recv(ctx context.Context) (wire.Packet, error) {
	select {
	case in := <-s.in:
		if in.err != nil {
			return nil, in.err
		}
		return in.p, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-s.closed:
		return nil, net.ErrClosed
	}
}

// take hands one received packet to ph, or returns the reader's error.
func (s *Session) take(in inbound, ph *phase) error {
	if in.err != nil {
		return in.err
	}
	return ph.handle(in.p)
}

// drain hands every packet already received to ph, without waiting.
func (s *Session) drain(ph *phase) error {
	for {
		select {
		case in := <-s.in:
			if err := s.take(in, ph); err != nil {
				return err
			}
		default:
			return nil
		}
	}
}

// Tick is the simulation's tick. Only safe on the goroutine running Join
// or Run, or after they return.
func (s *Session) Tick() uint64 { return s.follower.Sim().Tick() }

// Sim returns the simulation, with the same restriction as Tick.
func (s *Session) Sim() lockstep.Sim { return s.follower.Sim() }
