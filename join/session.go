package join

import (
	"bufio"
	"cmp"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lockhost/lockhost/internal/joinopt"
	"github.com/lockhost/lockhost/lockstep"
	"github.com/lockhost/lockhost/password"
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
	opt      joinopt.Options // test-only settings, from Join's context
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
	tokenMu   sync.Mutex    // guards token, grace, info and players once Run runs
	token     []byte        // for a rejoin
	grace     time.Duration // how long the token stays good after a drop
	live      atomic.Bool   // past WorldReady: the reader applies the host timeout
	do        chan func(lockstep.Sim)

	hashEvery    uint64                                // checkpoint interval the host asked for (0: none)
	checkpointer atomic.Pointer[lockstep.Checkpointer] // hashes every map every time (nothing is taken on trust), off this goroutine when it can
	outHashes    []*wire.ClientHashes                  // reports taken, not yet sent
	resync       *resyncRecv                           // a repair being received
	uploads      []*uploadPending                      // relay mode: uploads the host asked this arbiter for, in order (arbiter.go)
	uploadQ      chan func()                           // the uploads being sent, one after the other
	uploadOnce   sync.Once
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
	cfg = cfg.Defaults()
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("join config: %w", err)
	}
	start := time.Now()
	report(cfg, PhaseConnect, 0, 0)
	opt := joinopt.From(ctx)
	dial := (&net.Dialer{Timeout: cfg.DialTimeout}).DialContext
	if opt.Dial != nil {
		dial = func(ctx context.Context, _, addr string) (net.Conn, error) { return opt.Dial(ctx, addr) }
	}
	nc, err := dial(ctx, "tcp", cfg.Addr)
	if err != nil {
		return nil, fmt.Errorf("connect to %s: %w", cfg.Addr, err)
	}
	if cfg.TLS != nil {
		tc := tls.Client(nc, cfg.TLS)
		hctx, cancel := context.WithTimeout(ctx, cfg.HandshakeTimeout)
		err := tc.HandshakeContext(hctx)
		cancel()
		if err != nil {
			nc.Close()
			return nil, fmt.Errorf("TLS with %s: %w", cfg.Addr, err)
		}
		nc = tc
	}
	s := &Session{cfg: cfg, opt: opt, nc: nc, in: make(chan inbound, 1024), closed: make(chan struct{}), do: make(chan func(lockstep.Sim), 64)}
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

// readDirect reads one packet on the calling goroutine (handshake only).
func readDirect(fr *wire.FrameReader) (wire.Packet, error) {
	id, body, err := fr.Next()
	if err != nil {
		return nil, err
	}
	if id.FromClient() {
		return nil, protoErr("host sent client packet %s", id)
	}
	p, err := wire.Decode(id, body)
	if err != nil {
		return nil, protoErr("%w", err)
	}
	if d, ok := p.(*wire.ServerDisconnect); ok {
		return nil, &RejectedError{Reason: d.Reason, Message: d.Message, Statuses: d.DefStatuses, Detail: d.Detail}
	}
	return p, nil
}

// codecs are the codecs announced in Client_Protocol: every one this
// build reads, none as protocol 3 (whose clients read gzip only), or the
// test's list.
func (s *Session) codecs(protocol uint32) []uint8 {
	if s.opt.Codecs != nil {
		return s.opt.Codecs
	}
	if protocol < 4 {
		return nil
	}
	var out []uint8
	for _, c := range snapshot.Readable() {
		out = append(out, uint8(c))
	}
	return out
}

// solvePuzzle starts solving the password puzzle ml sets, if any, and
// returns a function that waits for the solution, and one that stops
// the solving. It gives up with ctx and after the handshake timeout.
func (s *Session) solvePuzzle(ctx context.Context, ml *wire.ServerModList) (wait func() (uint64, error), stop func()) {
	if ml.PuzzleBits == 0 {
		return func() (uint64, error) { return 0, nil }, func() {}
	}
	ctx, cancel := context.WithTimeout(ctx, s.cfg.HandshakeTimeout)
	type solution struct {
		nonce uint64
		err   error
	}
	done := make(chan solution, 1)
	start := time.Now()
	go func() {
		nonce, tried, err := password.SolvePuzzle(ctx, ml.PasswordChallenge, int(ml.PuzzleBits))
		s.cfg.Logger.Debug("password puzzle", "bits", ml.PuzzleBits, "hashes", tried, "ms", time.Since(start).Milliseconds(), "err", err)
		done <- solution{nonce, err}
	}()
	return func() (uint64, error) {
		r := <-done
		if r.err != nil {
			return 0, fmt.Errorf("the host's password puzzle of %d bits was not solved in time: %w", ml.PuzzleBits, r.err)
		}
		return r.nonce, nil
	}, cancel
}

func (s *Session) join(ctx context.Context, start time.Time) error {
	cfg := s.cfg
	report(cfg, PhaseHandshake, 0, 0)
	hs := time.Now()
	s.phaseMu.Lock()
	if ctx.Err() == nil { // else wake has set a deadline that must hold
		_ = s.nc.SetReadDeadline(time.Now().Add(cfg.HandshakeTimeout))
	}
	s.phaseMu.Unlock()
	fr := wire.NewFrameReader(bufio.NewReaderSize(s.nc, 64<<10), cfg.MaxFrame)

	protocol := wire.ProtocolVersion
	if s.opt.Protocol != 0 {
		protocol = s.opt.Protocol
	}
	if err := s.write(&wire.ClientProtocol{Protocol: protocol, Codecs: s.codecs(protocol)}); err != nil {
		return err
	}
	p, err := readDirect(fr)
	if err != nil {
		return fmt.Errorf("handshake: %w", err)
	}
	ml, ok := p.(*wire.ServerModList)
	if !ok {
		return protoErr("expected Server_ModList, got %s", p.ID())
	}
	s.info.GameVersion, s.info.Mods = ml.GameVersion, ml.Mods
	// A host under a password-guessing attack sets a puzzle on the
	// challenge: it is solved while the handshake goes on.
	puzzle, stopPuzzle := s.solvePuzzle(ctx, ml)
	defer stopPuzzle()

	dbs := make([]wire.DefSummary, len(cfg.Databases))
	for i, d := range cfg.Databases {
		dbs[i] = wire.DefSummary{Type: d.Type, Count: d.Count, Hash: d.Hash}
	}
	if err := s.write(&wire.ClientDefs{Databases: dbs}); err != nil {
		return err
	}
	// Clock-sync rounds, then DefsOK.
	var defsOK *wire.ServerDefsOK
	for defsOK == nil {
		if p, err = readDirect(fr); err != nil {
			return fmt.Errorf("handshake: %w", err)
		}
		switch p := p.(type) {
		case *wire.ServerClock:
			if err := s.answerClock(p); err != nil {
				return err
			}
		case *wire.ServerDefsOK:
			defsOK = p
		default:
			return protoErr("expected Server_DefsOK, got %s", p.ID())
		}
	}
	s.info.GameName, s.info.PlayerID = defsOK.GameName, defsOK.PlayerID

	var proof []byte
	if len(ml.PasswordChallenge) > 0 && len(cfg.Password) > 0 {
		proof = password.Proof(cfg.Password, ml.PasswordChallenge)
	}
	token, held := cfg.Token, []wire.HeldBlob(nil)
	if token == nil && cfg.Resume != nil {
		token, held = cfg.Resume.claim()
	}
	nonce, err := puzzle()
	if err != nil {
		return err
	}
	arbiter, err := s.arbiterProof(ml)
	if err != nil {
		return err
	}
	if err := s.write(&wire.ClientUsername{Name: cfg.Name, PasswordProof: proof, PuzzleNonce: nonce, Spectate: cfg.Spectate, Token: token, Resume: held,
		ArbiterProof: arbiter}); err != nil {
		return err
	}
	s.timings.Handshake = time.Since(hs)

	// From here the host streams: read on a goroutine, simulate here.
	s.phaseMu.Lock()
	if ctx.Err() != nil {
		s.phaseMu.Unlock()
		return ctx.Err()
	}
	s.streaming = true
	_ = s.nc.SetReadDeadline(time.Now().Add(cfg.ReadyTimeout))
	s.phaseMu.Unlock()
	go s.readLoop(fr)
	return s.download(ctx, start)
}

// answerClock echoes a clock-sync round at once, from whichever goroutine
// reads, so the host measures the network and not this client's load.
func (s *Session) answerClock(c *wire.ServerClock) error {
	return s.write(&wire.ClientClock{Nonce: c.Nonce, ClientTime: time.Now().UnixMicro()})
}

func (s *Session) readLoop(fr *wire.FrameReader) {
	for {
		if s.live.Load() {
			// In the session, the host sends at least a keepalive every
			// second: silence this long means it is gone.
			_ = s.nc.SetReadDeadline(time.Now().Add(s.cfg.HostTimeout))
		}
		id, body, err := fr.Next()
		if errors.Is(err, os.ErrDeadlineExceeded) && s.live.Load() {
			err = fmt.Errorf("the host went silent (nothing for %v): %w", s.cfg.HostTimeout, err)
		}
		if err == nil && id.FromClient() {
			err = protoErr("host sent client packet %s", id)
		}
		var p wire.Packet
		if err == nil {
			p, err = wire.Decode(id, body)
			if err != nil {
				err = protoErr("%w", err)
			}
		}
		if c, ok := p.(*wire.ServerClock); ok && err == nil {
			if err = s.answerClock(c); err == nil {
				continue
			}
		}
		if k, ok := p.(*wire.ServerKeepalive); ok && err == nil {
			// Echoed at once from here, so the host measures the network.
			if err = s.write(&wire.ClientKeepalive{Seq: k.Seq, HostTime: k.HostTime}); err == nil {
				continue
			}
		}
		if d, ok := p.(*wire.ServerDisconnect); ok {
			err = &RejectedError{Reason: d.Reason, Message: d.Message, Statuses: d.DefStatuses, Detail: d.Detail}
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

// handleSmall deals with packets that may arrive in any phase after the
// handshake. It returns true if it consumed p.
func (s *Session) handleSmall(p wire.Packet) bool {
	switch p := p.(type) {
	case *wire.ServerNotice:
		if s.cfg.Notice != nil {
			s.cfg.Notice(p.Text)
		}
		return true
	case *wire.ServerPlayerList:
		s.applyPlayers(p)
		return true
	case *wire.ServerSession:
		s.tokenMu.Lock()
		s.token, s.grace = p.Token, time.Duration(p.GraceMs)*time.Millisecond
		s.info.PlayerID = p.PlayerID
		s.tokenMu.Unlock()
		if s.cfg.Resume != nil && !s.ready {
			s.cfg.Resume.setToken(p.Token, time.Duration(p.GraceMs)*time.Millisecond)
		}
		s.hashEvery = uint64(p.HashEvery)
		return true
	case *wire.ServerDesync:
		if s.cfg.Desync != nil {
			s.cfg.Desync(*p)
		}
		return true
	case *wire.ServerChat:
		s.chatFrom(p)
		return true
	}
	return false
}

// Token is the session token the host gave on admission (nil before it
// arrives) and how long after a drop it stays good: pass it in
// Config.Token to rejoin as the same player. Safe from any goroutine.
func (s *Session) Token() ([]byte, time.Duration) {
	s.tokenMu.Lock()
	defer s.tokenMu.Unlock()
	return s.token, s.grace
}

// applyPlayers applies a player list or delta to the list this client
// holds.
func (s *Session) applyPlayers(p *wire.ServerPlayerList) {
	s.tokenMu.Lock()
	find := func(id int32) (int, bool) {
		return slices.BinarySearchFunc(s.players, id, func(pi wire.PlayerInfo, id int32) int { return cmp.Compare(pi.ID, id) })
	}
	switch p.Action {
	case wire.PlayerListFull:
		s.players = slices.Clone(p.Players)
		slices.SortFunc(s.players, func(a, b wire.PlayerInfo) int { return cmp.Compare(a.ID, b.ID) })
	case wire.PlayerListAdd:
		for _, pi := range p.Players {
			if i, ok := find(pi.ID); ok {
				s.players[i] = pi
			} else {
				s.players = slices.Insert(s.players, i, pi)
			}
		}
	case wire.PlayerListRemove:
		for _, pi := range p.Players {
			if i, ok := find(pi.ID); ok {
				s.players = slices.Delete(s.players, i, i+1)
			}
		}
	case wire.PlayerListStatus:
		for _, pi := range p.Players {
			if i, ok := find(pi.ID); ok {
				s.players[i].Status = pi.Status
			}
		}
	case wire.PlayerListLatencies:
		for _, pi := range p.Players {
			if i, ok := find(pi.ID); ok {
				s.players[i].LatencyMs = pi.LatencyMs
			}
		}
	}
	list := slices.Clone(s.players)
	s.tokenMu.Unlock()
	if s.cfg.Players != nil {
		s.cfg.Players(list)
	}
}

// Players is the player list as this client holds it. Safe from any
// goroutine.
func (s *Session) Players() []wire.PlayerInfo {
	s.tokenMu.Lock()
	defer s.tokenMu.Unlock()
	return slices.Clone(s.players)
}

// lostGrace is how long a download whose acknowledgement failed goes on
// reading what already arrived.
const lostGrace = 2 * time.Second

// receive takes the world payload into recv, acknowledging each chunk,
// and returns the live ticks that arrived meanwhile. dec is where the
// receiver's decoder is once the header has arrived. When an
// acknowledgement cannot be sent, the connection is gone, but what
// arrived before is still taken (a resume will not ask for it again)
// until the reading side ends too.
func (s *Session) receive(ctx context.Context, recv *snapshot.Receiver, dec **decoder) ([]*wire.ServerTick, error) {
	cfg := s.cfg
	var ticks []*wire.ServerTick // live ticks that arrive before the world is loaded
	var lost error               // an acknowledgement that could not be sent
	report(cfg, PhaseDownload, 0, 0)
	for done := false; !done; {
		in, err := s.recv(ctx)
		if err != nil {
			if lost != nil && ctx.Err() == nil {
				return nil, lost
			}
			return nil, err
		}
		switch p := in.(type) {
		case *wire.ServerWorldData:
			if done, err = recv.Add(p.Offset, p.Total, p.Data); err != nil {
				return nil, protoErr("world data: %w", err)
			}
			if *dec != nil {
				if err := (*dec).failed(); err != nil {
					return nil, protoErr("world data: %w", err)
				}
			}
			if lost == nil {
				if lost = s.write(&wire.ClientAck{Received: recv.Received()}); lost != nil {
					// What the link delivered is read at once; a link that
					// is merely stuck is not waited for.
					_ = s.nc.SetReadDeadline(time.Now().Add(lostGrace))
				}
			}
			report(cfg, PhaseDownload, recv.Received(), recv.Total())
		case *wire.ServerTick:
			ticks = append(ticks, p)
		case *wire.ServerUploadRequest:
			if p.Kind != wire.UploadWorld || recv.Received() > 0 {
				return nil, protoErr("unexpected %s while downloading", p.ID())
			}
			return ticks, &worldRequest{req: p}
		default:
			if !s.handleSmall(p) {
				return nil, protoErr("unexpected %s while downloading", p.ID())
			}
		}
	}
	return ticks, lost
}

func (s *Session) download(ctx context.Context, start time.Time) error {
	cfg := s.cfg
	dl := time.Now()
	recv, dec := s.receiver()
	defer func() {
		if *dec != nil {
			(*dec).stop()
		}
	}()
	ticks, err := s.receive(ctx, recv, dec)
	if wr := (*worldRequest)(nil); errors.As(err, &wr) {
		if len(ticks) > 0 {
			return protoErr("ticks before a new session's world")
		}
		return s.uploadWorld(ctx, start, wr.req)
	}
	if err != nil {
		return err
	}
	s.timings.Download = time.Since(dl)
	s.timings.Bytes = recv.Total()

	report(cfg, PhaseLoad, 0, 0)
	ld := time.Now()
	header := recv.Header()
	if *dec == nil {
		return protoErr("world data: no world blob")
	}
	sim, err := (*dec).finish()
	if cfg.Resume != nil {
		cfg.Resume.finished()
	}
	if err != nil {
		return protoErr("world data: %w", err)
	}
	s.info.Faction = header.Faction
	s.timings.RawBytes = header.RawSize()
	s.timings.Codec = header.World.Codec
	var queued []lockstep.Command
	for _, mc := range header.Commands {
		queued = append(queued, mc.Commands...)
	}
	f, err := lockstep.NewFollower(sim, queued)
	if err != nil {
		return protoErr("queued commands: %w", err)
	}
	f.OnStep(s.stepped)
	if cfg.OnApply != nil {
		f.OnApply(cfg.OnApply)
	}
	f.Grant(header.Granted)
	s.follower = f
	for _, t := range ticks {
		if err := s.applyTick(t); err != nil {
			return err
		}
	}
	s.timings.Load = time.Since(ld)
	s.timings.SnapshotTick = header.Tick

	// Catch up: simulate as fast as possible toward a moving grant, taking
	// in new ticks between batches.
	cu := time.Now()
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		n, err := f.Run(256)
		if err != nil {
			return err
		}
		s.timings.CatchUpTicks += uint64(n)
		report(cfg, PhaseCatchUp, sim.Tick()-header.Tick, f.Granted()-header.Tick)
		if err := s.drain(); err != nil {
			return err
		}
		if f.Behind() == 0 {
			break
		}
	}
	s.timings.CatchUp = time.Since(cu)
	s.timings.ReadyTick = sim.Tick()
	if err := s.write(&wire.ClientWorldReady{Tick: sim.Tick(), WorldHash: sim.WorldHash()}); err != nil {
		return err
	}
	s.ready, s.acked, s.ackedAt, s.lightTick = true, sim.Tick(), time.Now(), sim.Tick()
	if cfg.Resume != nil {
		cfg.Resume.ready()
	}
	s.live.Store(true)
	// The reader may be blocked under the join's longer deadline until the
	// next packet comes: a host silent from now on must be noticed after
	// HostTimeout, not ReadyTimeout.
	_ = s.nc.SetReadDeadline(time.Now().Add(s.cfg.HostTimeout))
	s.timings.Total = time.Since(start)
	return nil
}

// receiver returns the receiver of a world download and where the decoder
// it feeds will be once the header arrives: with a Resume, the decoder of
// the last attempt when it was assembling the same join point, else a new
// one; blobs the host left out come from those the Resume kept.
func (s *Session) receiver() (*snapshot.Receiver, **decoder) {
	cfg := s.cfg
	res := cfg.Resume
	var recv *snapshot.Receiver
	dec := new(*decoder)
	pick := func() *decoder {
		if *dec == nil {
			mk := func() *decoder { return newDecoder(cfg, recv.Header) }
			if res == nil {
				*dec = mk()
			} else {
				*dec = res.decoderFor(recv.Header(), mk)
			}
		}
		return *dec
	}
	recv = snapshot.NewReceiver(cfg.MaxPayload, func(i int, b snapshot.Blob) error {
		d := pick()
		if res != nil {
			res.keep(i, b)
			if d.has(i) {
				return nil // loaded by the attempt before
			}
		}
		return d.blob(i, b)
	})
	recv.OnHeld(func(i int, info snapshot.BlobInfo) error {
		if res == nil {
			return fmt.Errorf("the host left out blob %d, but this join holds nothing", i)
		}
		return res.held(pick(), i, info)
	})
	return recv, dec
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

// take handles one received packet, or returns the reader's error.
func (s *Session) take(in inbound) error {
	if in.err != nil {
		return in.err
	}
	return s.handle(in.p)
}

// drain handles every packet already received, without waiting.
func (s *Session) drain() error {
	for {
		select {
		case in := <-s.in:
			if err := s.take(in); err != nil {
				return err
			}
		default:
			return nil
		}
	}
}

func (s *Session) handle(p wire.Packet) error {
	switch p := p.(type) {
	case *wire.ServerTick:
		return s.applyTick(p)
	case *wire.ServerResync:
		if !s.ready {
			return protoErr("Server_Resync before WorldReady")
		}
		return s.startResync(p)
	case *wire.ServerWorldData:
		return s.resyncData(p)
	case *wire.ServerUploadRequest:
		return s.uploadRequested(p)
	case *wire.ServerUploadResult:
		return s.uploadResult(p)
	}
	if !s.handleSmall(p) {
		return protoErr("unexpected %s", p.ID())
	}
	return nil
}

func (s *Session) applyTick(t *wire.ServerTick) error {
	if s.cfg.Light && s.ready {
		// Light mode: the commands count as applied on arrival and the
		// grant as simulated; nothing is simulated.
		if s.cfg.OnApply != nil {
			for _, c := range t.Commands {
				s.cfg.OnApply(c)
			}
		}
		s.lightTick = max(s.lightTick, t.Granted)
		return nil
	}
	if err := s.follower.Add(t.Commands...); err != nil {
		return protoErr("%w", err)
	}
	s.follower.Grant(t.Granted)
	return nil
}

// reportTick tells the host how far this client has simulated, at most
// every ackEvery, for the host's lag policy.
func (s *Session) reportTick() error {
	tick := s.simulatedTick()
	if tick == s.acked || time.Since(s.ackedAt) < ackEvery {
		return nil
	}
	s.acked, s.ackedAt = tick, time.Now()
	return s.write(&wire.ClientTickAck{Tick: tick})
}

// simulatedTick is the tick this client has reached (the grant, in Light
// mode).
func (s *Session) simulatedTick() uint64 {
	if s.cfg.Light {
		return s.lightTick
	}
	return s.follower.Sim().Tick()
}

// ackEvery is how often a playing client reports its tick.
const ackEvery = 50 * time.Millisecond

// Run follows the session: it applies the host's ticks as they are granted
// until ctx is done (then it leaves, as Leave does, and returns nil) or the
// host ends the session (returning a *RejectedError, for example with
// reason ServerClosing) or the connection fails.
func (s *Session) Run(ctx context.Context) error {
	defer s.Close()
	var timer *time.Timer
	for {
		// A tick not yet reported is reported when ackEvery has passed,
		// even if nothing else arrives (the host may be holding time for
		// exactly this report).
		var wake <-chan time.Time
		if s.simulatedTick() != s.acked {
			if timer == nil {
				timer = time.NewTimer(ackEvery)
			} else {
				timer.Reset(max(0, ackEvery-time.Since(s.ackedAt)))
			}
			wake = timer.C
		}
		select {
		case in := <-s.in:
			if err := s.take(in); err != nil {
				return err
			}
			if err := s.drain(); err != nil {
				return err
			}
			if !s.cfg.Light {
				if err := s.simulate(); err != nil {
					return err
				}
			}
		case fn := <-s.do:
			fn(s.follower.Sim())
		case <-wake:
		case <-ctx.Done():
			if err := s.Leave("the client was stopped"); err != nil {
				s.cfg.Logger.Debug("leave", "err", err)
			}
			return nil
		case <-s.closed:
			return net.ErrClosed
		}
		if err := s.reportTick(); err != nil {
			return err
		}
	}
}

// simulate runs the follower up to the grant (or a repair's hold point),
// swaps a finished repair in and runs on, and sends the hash reports
// taken on the way.
func (s *Session) simulate() error {
	for {
		if _, err := s.follower.Run(1 << 30); errors.Is(err, lockstep.ErrRefused) && s.hashEvery > 0 && !s.opt.NoHashReports {
			// Diverged: the host's hash check finds it and repairs the
			// state; the session goes on meanwhile.
			s.cfg.Logger.Warn("desync", "err", err)
			continue
		} else if err != nil {
			return err
		}
		if err := s.flushHashes(); err != nil {
			return err
		}
		if released, err := s.finishUpload(); err != nil {
			return err
		} else if released {
			continue // the arbiter's upload is cut: run on
		}
		held := s.resync != nil
		if err := s.finishResync(); err != nil {
			return err
		}
		if !held || s.resync != nil {
			return nil // nothing swapped in: nothing more to run now
		}
	}
}

// Do runs fn on the goroutine that owns the simulation (inside Run), for
// reading its state safely, for example to build a valid command. It waits
// while the queue of such calls is full and returns false once the session
// has ended.
func (s *Session) Do(fn func(sim lockstep.Sim)) bool {
	select {
	case s.do <- fn:
		return true
	case <-s.closed:
		return false
	}
}

// Tick is the simulation's tick. Only safe on the goroutine running Join
// or Run, or after they return.
func (s *Session) Tick() uint64 { return s.follower.Sim().Tick() }

// Sim returns the simulation, with the same restriction as Tick.
func (s *Session) Sim() lockstep.Sim { return s.follower.Sim() }
