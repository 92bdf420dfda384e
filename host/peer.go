package host

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"slices"
	"time"

	"github.com/lockhost/lockhost/host/gate"
	"github.com/lockhost/lockhost/internal/ratelimit"
	"github.com/lockhost/lockhost/lockstep"
	"github.com/lockhost/lockhost/password"
	"github.com/lockhost/lockhost/snapshot"
	"github.com/lockhost/lockhost/wire"
)

// protocolError is a reason to end a connection with a disconnect packet.
type protocolError struct {
	disc *wire.ServerDisconnect
}

func (e *protocolError) Error() string {
	return fmt.Sprintf("%s: %s", e.disc.Reason, e.disc.Message)
}

func refuse(r wire.Reason, format string, args ...any) error {
	msg := r.Sentence()
	if format != "" {
		msg = fmt.Sprintf(format, args...)
	}
	return &protocolError{disc: &wire.ServerDisconnect{Reason: r, Message: msg}}
}

// peer is the reading side of one connection: it runs the handshake in a
// straight line, then reads commands.
type peer struct {
	srv  *Server
	nc   net.Conn
	conn *conn
	fr   *wire.FrameReader
	log  *slog.Logger
	id   int32
	name string
	// pend is the connection's entry in the pending table: it makes
	// progress there with each handshake step and leaves it once
	// admitted, and at the latest when it ends.
	pend *gate.Conn

	member      *member          // once admitted
	cmdLimit    ratelimit.Bucket // this player's command rate
	lastRefusal time.Time        // when the last refusal notice went out
	hashTick    *uint64          // tick of the last hash report

	// The join's timeline, for the join record and log line.
	start, mark time.Time
	phases      []PhaseTime
	spectator   bool
	rejoin      bool
	puzzleBits  int              // the password puzzle set in the mod list (0: none)
	puzzleDone  func()           // once the attempt is decided: ends a free pass
	resumed     uint64           // world payload bytes left out: the joiner held them
	made        map[int32]uint64 // map ID to the hash of the section the joiner made (sections.go)
	retry       bool             // this connection retries a join that dropped before WorldReady
	join        *joinProgress    // the join across its retries, once admitted (only seq is read here)
	retries     int              // the join's connections before this one
	world       *transfer        // the world's transfer, once started
	slot        *upload          // the join's place in the host's uplink, once in line
	finish      time.Time        // the download's deadline at its minimum rate, before time waited after yielding its slot (zero: none)
	minRate     float64          // that minimum rate, bytes per second (0: none)
	joined      bool             // the join record has been written
	relay       peerRelay        // relay mode: the arbiter's proof and uploads (relaypeer.go)
}

// phase ends the join phase under way.
func (p *peer) phase(name string) {
	now := time.Now()
	p.phases = append(p.phases, PhaseTime{Phase: name, D: now.Sub(p.mark)})
	p.mark = now
}

// record writes the join's record: outcome JoinOK when it succeeded.
func (p *peer) record(outcome, reason string) {
	p.joined = true
	r := JoinRecord{At: time.Now(), Remote: p.nc.RemoteAddr().String(), Name: p.name,
		Spectator: p.spectator, Rejoin: p.rejoin, Outcome: outcome, Reason: reason, Phases: p.phases,
		Total: time.Since(p.start), Resumed: p.resumed, Path: p.conn.path}
	if p.world != nil {
		r.Bytes = p.world.written.Load()
	}
	if p.join != nil {
		r.Join, r.Retries, r.Retry = p.join.seq, p.retries, p.retry
	}
	p.srv.sess.pub.history.join(r)
}

func (s *Server) handle(ctx context.Context, raw net.Conn, pend *gate.Conn) {
	defer pend.Release()
	start := time.Now()
	log := s.cfg.Logger.With("remote", raw.RemoteAddr().String())
	nc, err := s.secure(ctx, raw, s.pending.Timeout(s.cfg.Timeouts.Handshake))
	if err != nil {
		s.refuseTLS(raw, start, err)
		return
	}
	if s.cfg.Admission.TLS != nil {
		pend.Progress(time.Now())
	}
	p := s.newPeer(ctx, nc, pend, start, log)
	p.conn.path = connPath(raw) // before the session or a record reads it
	admitted, err := p.run()
	if p.puzzleDone != nil {
		p.puzzleDone() // a free pass not used is given back
	}
	outcome, reason, left := p.ended(raw, admitted, err)
	// The slot is free now, not once the refusal has been flushed.
	pend.Release()
	if !p.joined {
		p.record(outcome, reason)
	}
	if admitted {
		select {
		case s.sess.leaves <- leaveReq{id: p.id, conn: p.conn, why: p.conn.why, left: left}:
		case <-s.sess.done:
		}
	}
	<-p.conn.done
}

// refuseTLS records a connection whose TLS handshake failed: no protocol
// was spoken, so there is nobody to tell why.
func (s *Server) refuseTLS(raw net.Conn, start time.Time, err error) {
	s.refusal.Refused(time.Now(), addrKey(remoteIP(raw)), "client refused", "TLSHandshake",
		"remote", raw.RemoteAddr().String(), "reason", "TLS handshake", "detail", err)
	s.sess.pub.history.join(JoinRecord{At: time.Now(), Remote: raw.RemoteAddr().String(), Outcome: JoinRefused,
		Reason: "TLSHandshake", Total: time.Since(start)})
	raw.Close()
}

// newPeer makes the peer of a connection that speaks the protocol on nc:
// its sending side, closed when ctx ends or the pending table evicts it.
func (s *Server) newPeer(ctx context.Context, nc net.Conn, pend *gate.Conn, start time.Time, log *slog.Logger) *peer {
	c := newConn(nc, s.cfg.Limits.SendQueue, s.cfg.Limits.SendQueueBytes, s.cfg.Timeouts.Write, log)
	c.sent = &s.sent
	c.up = s.uplink // read by the writer only once a transfer reaches it, after this
	// Evicted from the pending table, the client is told why.
	pend.SetKill(func() { c.close(wire.ReasonRateLimited, "the host is busy with other joining connections") })
	go func() {
		select {
		case <-ctx.Done():
			c.close(wire.ReasonServerClosing, "")
		case <-c.closing:
		}
	}()
	return &peer{srv: s, nc: nc, conn: c, fr: wire.NewFrameReader(bufio.NewReaderSize(nc, 16<<10), s.cfg.Limits.HandshakeMaxFrame), log: log,
		start: start, mark: start, pend: pend}
}

// ended closes the connection as err, how run ended, says, logs it and
// returns the join's outcome and reason, and whether the client left on
// purpose. A connection that was never admitted logs through the
// refusal log, so a flood from one address is one line per interval.
func (p *peer) ended(raw net.Conn, admitted bool, err error) (outcome, reason string, left bool) {
	s, c, pend := p.srv, p.conn, p.pend
	logf := func(msg, reason string, attrs ...any) {
		if admitted {
			p.log.Info(msg, attrs...)
			return
		}
		s.refusal.Refused(time.Now(), addrKey(remoteIP(raw)), msg, reason, append([]any{"remote", raw.RemoteAddr().String()}, attrs...)...)
	}
	var pe *protocolError
	switch {
	case errors.As(err, &pe):
		logf("client refused", pe.disc.Reason.String(), "player", p.id, "name", p.name, "reason", pe.disc.Reason.String(), "detail", pe.disc.Message)
		c.closeWith(pe.disc, pe.disc.Reason.String())
		return JoinRefused, pe.disc.Reason.String(), false
	case errors.Is(err, errLeft):
		if !admitted {
			s.refusal.Gone(time.Now(), addrKey(remoteIP(raw)), "client left before admission", "remote", raw.RemoteAddr().String(), "player", p.id)
		}
		c.left.Store(true)
		c.closeWith(nil, "")
		return JoinLeft, "", true
	case pend.WasEvicted():
		logf("client evicted", wire.ReasonRateLimited.String(), "player", p.id, "reason", "pending table full")
		return JoinRefused, wire.ReasonRateLimited.String(), false
	case errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed) || lostConnection(err):
		c.closeWith(nil, "connection lost")
		return JoinDropped, "", false
	case errors.Is(err, os.ErrDeadlineExceeded):
		if !admitted {
			pend.Penalize(time.Now())
		}
		logf("client timed out", wire.ReasonTimeout.String(), "player", p.id, "name", p.name)
		c.close(wire.ReasonTimeout, "timed out")
		return JoinTimedOut, wire.ReasonTimeout.String(), false
	default:
		logf("client dropped", wire.ReasonBadPacket.String(), "player", p.id, "name", p.name, "err", err)
		c.close(wire.ReasonBadPacket, err.Error())
		return JoinRefused, wire.ReasonBadPacket.String(), false
	}
}

// read reads the next frame and decodes it, requiring one of the given IDs.
func (p *peer) read(allowed ...wire.ID) (wire.Packet, error) {
	for {
		id, body, err := p.fr.Next()
		if err != nil {
			if errors.Is(err, wire.ErrFrameTooLarge) || errors.Is(err, wire.ErrEmptyFrame) {
				return nil, refuse(wire.ReasonBadPacket, "%s", err)
			}
			if p.isClosing() {
				return nil, net.ErrClosed
			}
			return nil, err
		}
		if id == wire.IDClientLeave && p.member == nil {
			// A joiner that gives up before admission leaves as cleanly
			// as a member does.
			if _, err := wire.Decode(id, body); err != nil {
				return nil, refuse(wire.ReasonBadPacket, "%s", err)
			}
			return nil, errLeft
		}
		if p.member != nil {
			p.member.heard.Store(time.Now().UnixNano())
			// Keepalive echoes, chat and a leave are allowed in every
			// phase after admission.
			if handled, err := p.anyPhase(id, body); err != nil {
				return nil, err
			} else if handled {
				continue
			}
		}
		ok := false
		for _, a := range allowed {
			ok = ok || id == a
		}
		if !ok {
			return nil, refuse(wire.ReasonBadPacket, "%s is not allowed now", id)
		}
		if id == wire.IDClientDefs && declaredDatabases(body) > wire.MaxDatabases {
			// Refused before decoding them: empty entries cost a byte each
			// on the wire and far more decoded.
			return nil, refuse(wire.ReasonGeneric, "the client declared more than %d def databases", wire.MaxDatabases)
		}
		if id == wire.IDClientDefs && len(body) > wire.MaxDeclarationBytes && p.srv.sess.defs.Load().awaiting {
			return nil, refuse(wire.ReasonGeneric, "The client declared %d bytes of def databases; a relay host takes a declaration of at most %d bytes.",
				len(body), wire.MaxDeclarationBytes)
		}
		pkt, err := wire.Decode(id, body)
		if err != nil {
			if errors.Is(err, wire.ErrTooManyDatabases) {
				return nil, refuse(wire.ReasonGeneric, "the client declared more than %d def databases", wire.MaxDatabases)
			}
			return nil, refuse(wire.ReasonBadPacket, "%s", err)
		}
		return pkt, nil
	}
}

// lostConnection reports a read that failed because the connection
// broke (reset by the peer or the network): a drop, not a bad packet.
func lostConnection(err error) bool {
	var oe *net.OpError
	return errors.As(err, &oe) && oe.Op == "read" && !oe.Timeout()
}

func (p *peer) isClosing() bool {
	select {
	case <-p.conn.closing:
		return true
	default:
		return false
	}
}

// run drives the connection through every phase, one named step each:
// handshake, admit, transfer, settle, play. admitted reports whether the
// session knows the player (and so must be told when it leaves). It never
// returns a nil error: a client that leaves cleanly, in any phase, ends it
// with errLeft, which serve records as JoinLeft.
func (p *peer) run() (admitted bool, err error) {
	challenge, err := p.handshake()
	if err != nil {
		return false, err
	}
	jr, err := p.admit(challenge)
	if err != nil {
		return false, err
	}
	pl, err := p.transfer(jr)
	if err != nil {
		return true, err
	}
	if err := p.settle(jr.member, pl); err != nil {
		return true, err
	}
	return true, p.play(jr.member)
}

// handshake runs steps 1-4 under the handshake deadline: the protocol
// version, the mod list (with a fresh password challenge if the session
// has a password, which it returns), the def databases, a clock sync and
// DefsOK with the player's ID.
func (p *peer) handshake() (challenge []byte, err error) {
	cfg := p.srv.cfg
	_ = p.nc.SetReadDeadline(time.Now().Add(p.srv.pending.Timeout(cfg.Timeouts.Handshake)))

	// 1. Protocol.
	pkt, err := p.read(wire.IDClientProtocol)
	if err != nil {
		return nil, err
	}
	cp := pkt.(*wire.ClientProtocol)
	if v := cp.Protocol; v < wire.MinProtocolVersion || v > wire.ProtocolVersion {
		older := "this client is older than the host: update lockhost on this machine"
		if v > wire.ProtocolVersion {
			older = "the host is older than this client: the host needs to update lockhost"
		}
		return nil, refuse(wire.ReasonProtocol, "Protocol mismatch: host speaks %d, client speaks %d; %s.", wire.ProtocolVersion, v, older)
	}
	p.conn.codec = chooseCodec(p.srv.sess.points.comp.Codec, cp.Codecs)
	p.phase("handshake")
	p.pend.Progress(time.Now())

	// 2. Mod list, with the challenge and, when guesses come fast, a
	// puzzle (package gate).
	hd := p.srv.sess.defs.Load()
	if len(cfg.Admission.Password) > 0 {
		if challenge, err = password.NewChallenge(); err != nil {
			return nil, err
		}
	}
	arbiterChallenge, err := p.relayChallenge()
	if err != nil {
		return nil, err
	}
	if len(challenge) > 0 || len(arbiterChallenge) > 0 {
		// A secret may be proved: the password, or a relay host's arbiter
		// secret; both are guessed against one budget.
		p.puzzleBits, p.puzzleDone = p.srv.guesses.Puzzle(time.Now())
	}
	offerHash, offerSize := contentOffer(hd.content.Share)
	if !p.conn.sendPacket(&wire.ServerModList{GameVersion: hd.content.GameVersion, Mods: hd.content.Mods, PasswordChallenge: challenge,
		Databases: hd.announced, PuzzleBits: uint8(p.puzzleBits), ArbiterChallenge: arbiterChallenge,
		ContentHash: offerHash, ContentSize: offerSize}) {
		return nil, net.ErrClosed
	}

	// 3. Def databases, after the content the joiner fetches, if any
	// (content.go).
	if pkt, err = p.read(wire.IDClientDefs, wire.IDClientContentGet); err != nil {
		return nil, err
	}
	if cg, ok := pkt.(*wire.ClientContentGet); ok {
		if pkt, err = p.serveContent(hd.content.Share, cg); err != nil {
			return nil, err
		}
	}
	if err := p.checkDefs(hd, pkt.(*wire.ClientDefs)); err != nil {
		return nil, err
	}
	p.pend.Progress(time.Now())

	// Clock sync, still under the handshake deadline.
	if _, err := p.syncClock(nil); err != nil {
		return nil, err
	}

	// 4. DefsOK with the player's provisional ID: the one a first join
	// admitted now would get. The ID is given on admission (session.admit),
	// so a joiner refused or gone before it uses none up.
	p.id = p.srv.nextID.Load() + 1
	p.log = p.log.With("player", p.id)
	if !p.conn.sendPacket(&wire.ServerDefsOK{GameName: cfg.GameName, PlayerID: p.id, Sections: p.offerSections()}) {
		return nil, net.ErrClosed
	}
	p.pend.Progress(time.Now())
	p.phase("defs")
	return challenge, nil
}

// admit runs step 5: it waits for a username (an empty one is ignored,
// under the same deadline), checks the password proof against challenge
// and asks the session to admit the player. On admission the connection
// is no longer pending and takes full-size frames.
func (p *peer) admit(challenge []byte) (joinReply, error) {
	cfg := p.srv.cfg
	_ = p.nc.SetReadDeadline(time.Now().Add(p.srv.pending.Timeout(cfg.Timeouts.Username)))
	var cu *wire.ClientUsername
	for cu == nil || cu.Name == "" {
		pkt, err := p.read(wire.IDClientUsername)
		if err != nil {
			return joinReply{}, err
		}
		cu = pkt.(*wire.ClientUsername)
	}
	p.name, p.spectator, p.rejoin = cu.Name, cu.Spectate, len(cu.Token) > 0
	p.made = madeSections(cu.Made)
	p.pend.Progress(time.Now())
	// The proof is checked whatever the other rules say, so a wrong
	// password costs exactly what a right one does; attempts are limited
	// per address, and checks in all (package gate), an arbiter proof's
	// with the password's.
	passwordOK := len(cfg.Admission.Password) == 0
	if !passwordOK || len(cu.ArbiterProof) > 0 && len(p.relay.challenge) > 0 {
		if err := p.guess(challenge, cu); err != nil {
			return joinReply{}, err
		}
	}
	if !passwordOK {
		passwordOK = password.Verify(cfg.Admission.Password, challenge, cu.PasswordProof)
		p.srv.guesses.PasswordChecked(passwordOK)
	}
	reply := make(chan joinReply, 1)
	if passwordOK {
		p.pend.HandOver(time.Now())
	}
	arbiterClaim, arbiterOK := p.checkArbiter(cu.ArbiterProof)
	select {
	case p.srv.sess.joins <- joinReq{token: cu.Token, id: p.id, name: cu.Name, spectator: cu.Spectate, passwordOK: passwordOK,
		arbiterClaim: arbiterClaim, arbiterOK: arbiterOK, declared: p.relay.declared,
		resume: cu.Resume, held: cu.Held, addr: addrKey(remoteIP(p.nc)), conn: p.conn, reply: reply}:
	case <-p.srv.sess.done:
		return joinReply{}, refuse(wire.ReasonServerClosing, "")
	}
	var jr joinReply
	select {
	case jr = <-reply: // at once, or once a replay it waits for is built (replays.go)
	case <-p.srv.sess.done:
		return joinReply{}, refuse(wire.ReasonServerClosing, "")
	}
	if jr.err != nil {
		var ce *coolingError
		if errors.As(jr.err, &ce) {
			return joinReply{}, refuse(ce.why, "%s", ce.Error())
		}
		if be := (*bannedError)(nil); errors.As(jr.err, &be) {
			return joinReply{}, refuse(wire.ReasonBanned, "%s", be.Error())
		}
		if pe := (*protocolError)(nil); errors.As(jr.err, &pe) {
			return joinReply{}, pe // a relay session's late Defs refusal (relaydefs.go)
		}
		if re := (*reasonError)(nil); errors.As(jr.err, &re) {
			return joinReply{}, refuse(re.reason, "%s", re.msg)
		}
		r := admissionReason(jr.err)
		return joinReply{}, refuse(r, "%s", r.Sentence())
	}
	p.pend.Release()
	p.fr.SetMax(cfg.Limits.MaxFrame)
	p.member, p.join, p.retries = jr.member, jr.join, jr.retries
	p.id, p.name = jr.id, jr.member.name
	p.spectator = jr.member.spectator
	// A rejoin takes its old ID: every line from here names the player
	// as the others know it.
	p.log = p.srv.cfg.Logger.With("remote", p.nc.RemoteAddr().String(), "player", p.id, "name", p.name)
	p.phase("admission")
	return jr, nil
}

// guess spends one attempt of the guess budget (package gate) on the
// secrets cu proves, the password, the arbiter secret or both, and
// returns the refusal of an attempt the budget does not allow: their
// proofs are then not checked. The puzzle is on the password challenge,
// or on the arbiter challenge when the session has no password.
func (p *peer) guess(challenge []byte, cu *wire.ClientUsername) error {
	what := "password"
	if len(challenge) == 0 {
		challenge, what = p.relay.challenge, "arbiter secret"
	}
	solved := password.PuzzleSolved(challenge, p.puzzleBits, cu.PuzzleNonce)
	if p.puzzleDone != nil {
		p.puzzleDone()
	}
	switch p.srv.guesses.Attempt(addrKey(remoteIP(p.nc)), time.Now(), p.puzzleBits, solved) {
	case gate.AddrLimit:
		return refuse(wire.ReasonRateLimited, "Too many %s attempts; wait a minute and try again.", what)
	case gate.NoSolution:
		// Guessing without the work the host asked for is an offence
		// of the address, as stalling is (package gate).
		p.pend.Penalize(time.Now())
		return refuse(wire.ReasonRateLimited, "The host is under a %s-guessing attack and asked for a proof of work this client did not give in time; try again.", what)
	case gate.AllLimit:
		return refuse(wire.ReasonRateLimited, "Too many %s attempts on this host; wait a minute and try again.", what)
	}
	return nil
}

// chooseCodec is the codec for a client that reads offered (codec numbers
// from its Client_Protocol): want if it lists it, else gzip. This is the
// one place the host negotiates codecs.
func chooseCodec(want snapshot.Codec, offered []uint8) snapshot.Codec {
	cs := make([]snapshot.Codec, len(offered))
	for i, c := range offered {
		cs[i] = snapshot.Codec(c)
	}
	return snapshot.Choose(want, cs)
}

// transfer runs steps 6-8: it sends the join point's world while small
// packets already flow, follows the acknowledgements under the stall
// deadline and the minimum download rate, then waits for WorldReady under
// the catch-up deadline. It returns the payload sent and WorldReady.
func (p *peer) transfer(jr joinReply) (*snapshot.Payload, error) {
	cfg := p.srv.cfg
	if jr.uploader {
		return p.uploadWorld(jr)
	}
	if jr.replayed {
		return p.replayed(jr)
	}
	point, err := p.whileHostBusy(func() (*snapshot.Point, error) { return jr.point.compressed(p.conn.codec) })
	if rerr := relayWaitRefusal(err); rerr != nil {
		return nil, rerr
	}
	if err != nil {
		p.log.Error("compress join point", "err", err)
		return nil, refuse(wire.ReasonGeneric, "the host could not prepare the world")
	}
	if p.slot, err = p.awaitSlot(); err != nil {
		return nil, err
	}
	defer p.srv.uplink.leave(p.slot)
	// The download's deadlines start once the point is there and the
	// upload slot is the joiner's: it may have waited for the point's
	// build, a relay arbiter's upload, or other joiners' downloads.
	_ = p.nc.SetReadDeadline(time.Now().Add(cfg.Timeouts.DownloadStall))
	pl, err := snapshot.NewJoinPayload(point, p.layout(jr, point))
	if err != nil {
		p.log.Error("lay out join point", "err", err)
		return nil, refuse(wire.ReasonGeneric, "the host could not prepare the world")
	}
	p.world = newJoinTransfer(pl, p.srv.uplink.downloadWindow(cfg.Join.DownloadWindow))
	jr.join.last.Store(p.world)
	if p.minRate = p.minDownloadRate(); p.minRate > 0 {
		p.finish = time.Now().Add(cfg.Timeouts.DownloadStall + time.Duration(float64(pl.Total())/p.minRate*float64(time.Second)))
	}
	p.srv.uplink.start(p.slot, p.world, p.slotTurn)
	p.conn.startTransfer(p.world)
	p.resumed, p.retry = pl.Held(), jr.held != nil
	if jr.held != nil {
		p.srv.sess.stats.update(func(st *Stats) { st.Resumes++; st.ResumedBytes += pl.Held() })
	}
	if pl.Thinned() > 0 {
		p.srv.sess.stats.update(func(st *Stats) { st.SectionJoins++; st.SectionBytes += pl.Thinned() })
	}
	p.log.Info("sending world", "spectator", p.spectator, "tick", point.Tick, "bytes", pl.Total(),
		"raw_bytes", point.RawSize(), "resumed_bytes", pl.Held(), "sections_bytes", pl.Thinned(), "retries", jr.retries)
	wr, err := p.download(pl)
	if err != nil {
		return nil, err
	}
	p.phase("catch_up")
	if err := p.worldReady(wr); err != nil {
		return nil, err
	}
	return pl, nil
}

// replayed waits, under the catch-up deadline, for the WorldReady of a
// rejoin from the world it held: the commands it missed went out with
// its admission, and nothing else comes before it catches up.
func (p *peer) replayed(jr joinReply) (*snapshot.Payload, error) {
	_ = p.nc.SetReadDeadline(time.Now().Add(p.srv.cfg.Timeouts.CatchUp))
	p.log.Info("replaying the commands missed", "granted", jr.granted)
	pkt, err := p.read(wire.IDClientWorldReady)
	if err != nil {
		return nil, err
	}
	p.phase("catch_up")
	if err := p.worldReady(pkt.(*wire.ClientWorldReady)); err != nil {
		return nil, err
	}
	return &snapshot.Payload{}, nil
}

// worldReady hands the client's WorldReady to the session, whether the
// client downloaded its world or, as a relay session's first arbiter,
// uploaded it.
func (p *peer) worldReady(wr *wire.ClientWorldReady) error {
	// The reader is the only writer of acked: the tick the client is
	// ready at is its first report, before the session counts its lag.
	if m := p.member; wr.Tick > m.acked.Load() {
		m.acked.Store(wr.Tick)
	}
	select {
	case p.srv.sess.readies <- readyReq{id: p.id, tick: wr.Tick, worldHash: wr.WorldHash}:
		return nil
	case <-p.srv.sess.done:
		return net.ErrClosed
	}
}

// download reads the acknowledgements of the transfer of pl, which
// measure the download (and tell the join's progress what the joiner
// holds), and then WorldReady. The download must also keep an average
// rate: it has a deadline of its own (p.finish), which the stall
// deadline never passes. While the join waits for its slot back after
// yielding it, neither runs: the time waited is added to the first.
func (p *peer) download(pl *snapshot.Payload) (*wire.ClientWorldReady, error) {
	cfg := p.srv.cfg
	total := pl.Total()
	var acked uint64
	downloaded := false
	downloadDeadline := func() { p.srv.uplink.hold(p.slot, p.downloadDeadline) }
	downloadDeadline()
	for {
		pkt, err := p.read(wire.IDClientAck, wire.IDClientWorldReady)
		if err != nil {
			if !downloaded && !p.finish.IsZero() && errors.Is(err, os.ErrDeadlineExceeded) && p.pastFinish() {
				return nil, refuse(wire.ReasonTimeout, "The download was slower than the host's minimum of %s/s: %d of %d bytes acknowledged.",
					byteSize(p.minRate), acked, total)
			}
			return nil, err
		}
		switch pkt := pkt.(type) {
		case *wire.ClientAck:
			if pkt.Received < acked || pkt.Received > total {
				return nil, refuse(wire.ReasonBadPacket, "acknowledged %d of %d bytes after %d", pkt.Received, total, acked)
			}
			if pkt.Received > acked {
				acked = pkt.Received
				p.world.ack(acked)
				downloadDeadline()
			}
			if acked == total && !downloaded {
				downloaded = true
				p.srv.uplink.leave(p.slot) // the next joiner's turn
				p.phase("download")
				_ = p.nc.SetReadDeadline(time.Now().Add(cfg.Timeouts.CatchUp))
			}
		case *wire.ClientWorldReady:
			if acked != total {
				return nil, refuse(wire.ReasonBadPacket, "WorldReady after acknowledging %d of %d bytes", acked, total)
			}
			return pkt, nil
		}
	}
}

// downloadDeadline sets the read deadline of a download in progress:
// none while the join waits for its slot back, else the stall deadline,
// or the download's own if sooner, moved on by the time waited. It runs
// under the uplink's lock (uplink.hold, or notify through slotTurn), so
// the reader's deadline and the uplink's turns are set in order.
func (p *peer) downloadDeadline(waiting bool, waited time.Duration) {
	if waiting {
		_ = p.nc.SetReadDeadline(time.Time{})
		return
	}
	d := time.Now().Add(p.srv.cfg.Timeouts.DownloadStall)
	if !p.finish.IsZero() && p.finish.Add(waited).Before(d) {
		d = p.finish.Add(waited)
	}
	_ = p.nc.SetReadDeadline(d)
}

// pastFinish reports whether the download's own deadline, moved on by
// the time the join waited after yielding its slot, has passed.
func (p *peer) pastFinish() bool {
	past := false
	p.srv.uplink.hold(p.slot, func(waiting bool, waited time.Duration) {
		past = !waiting && !time.Now().Before(p.finish.Add(waited))
	})
	return past
}

// settle syncs clocks again after WorldReady, taking the member's commands
// meanwhile, tells the session the round trip, and logs and records the
// join with every phase's time.
func (p *peer) settle(m *member, pl *snapshot.Payload) error {
	cfg := p.srv.cfg
	_ = p.nc.SetReadDeadline(time.Now().Add(p.srv.pending.Timeout(cfg.Timeouts.Handshake)))
	rtt, err := p.syncClock(func(pkt wire.Packet) error { return p.playing(pkt, m) }, wire.IDClientCommand, wire.IDClientTickAck, wire.IDClientHashes, wire.IDClientResynced, wire.IDClientExplainReply)
	if err != nil {
		return err
	}
	_ = p.nc.SetReadDeadline(time.Time{})
	select {
	case p.srv.sess.latency <- latencyReq{id: p.id, rtt: rtt}:
	case <-p.srv.sess.done:
		return net.ErrClosed
	}
	p.phase("clock_sync")
	attrs := []any{"spectator", p.spectator, "rejoin", p.rejoin, "bytes", pl.Total(),
		"total_ms", ms(time.Since(p.start)), "rtt_ms", ms(rtt)}
	for _, ph := range p.phases {
		attrs = append(attrs, ph.Phase+"_ms", ms(ph.D))
	}
	p.log.Info("player joined", attrs...)
	p.record(JoinOK, "")
	return nil
}

// play reads the playing phase's commands and tick reports until the
// connection ends.
func (p *peer) play(m *member) error {
	for {
		pkt, err := p.read(wire.IDClientCommand, wire.IDClientTickAck, wire.IDClientHashes, wire.IDClientResynced, wire.IDClientExplainReply)
		if err != nil {
			return err
		}
		if err := p.playing(pkt, m); err != nil {
			return err
		}
	}
}

// playing handles a packet of the playing phase: a tick report or a
// command.
func (p *peer) playing(pkt wire.Packet, m *member) error {
	switch pkt := pkt.(type) {
	case *wire.ClientTickAck:
		if pkt.Tick > m.acked.Load() {
			m.acked.Store(pkt.Tick)
		}
		return nil
	case *wire.ClientCommand:
		return p.command(pkt, m.spectator)
	case *wire.ClientHashes:
		return p.hashes(pkt)
	case *wire.ClientExplainReply:
		// Straight into the waiting explanation's bounded buffer, never
		// through the session goroutine (explain.go).
		if w := p.conn.explain.Load(); w != nil && w.q == pkt.Request {
			if err := w.add(pkt); err != nil {
				return refuse(wire.ReasonBadPacket, "%v", err)
			}
		}
		return nil
	case *wire.ClientResynced:
		select {
		case p.srv.sess.hashes <- hashReq{id: p.id, conn: p.conn, resynced: pkt}:
			return nil
		case <-p.srv.sess.done:
			return net.ErrClosed
		}
	}
	return nil
}

// hashes checks a hash report's shape (interval, order, no map twice) and
// hands it to the session, which compares it with its own hashes.
func (p *peer) hashes(h *wire.ClientHashes) error {
	every := uint64(p.srv.cfg.Desync.HashEvery)
	switch {
	case every == 0:
		return refuse(wire.ReasonBadPacket, "hash report, but the host asked for none")
	case h.Tick%every != 0:
		return refuse(wire.ReasonBadPacket, "hash report for tick %d, not a multiple of the interval %d", h.Tick, every)
	case p.hashTick != nil && h.Tick <= *p.hashTick:
		return refuse(wire.ReasonBadPacket, "hash report for tick %d after one for tick %d: at most one per interval, in order", h.Tick, *p.hashTick)
	}
	seen := make(map[int32]struct{}, len(h.Maps))
	for _, m := range h.Maps {
		if _, dup := seen[m.MapID]; dup {
			return refuse(wire.ReasonBadPacket, "hash report names map %d twice", m.MapID)
		}
		seen[m.MapID] = struct{}{}
	}
	t := h.Tick
	p.hashTick = &t
	select {
	case p.srv.sess.hashes <- hashReq{id: p.id, conn: p.conn, r: h}:
		return nil
	case <-p.srv.sess.done:
		return net.ErrClosed
	}
}

// keepalive folds an echo's round trip into the member's smoothed RTT
// (exponential, 1/8 weight, as TCP does).
func (p *peer) keepalive(k *wire.ClientKeepalive) {
	rtt := time.Now().UnixMicro() - k.HostTime
	if rtt < 0 || rtt > int64(time.Hour/time.Microsecond) {
		return // not an echo of ours
	}
	old := p.member.rtt.Load()
	if old == 0 {
		p.member.rtt.Store(rtt)
		return
	}
	p.member.rtt.Store(old + (rtt-old)/8)
}

// command hands a playing client's command to the session, after the
// limits: spectators send none, payloads have a size limit and players a
// rate. A refusal is a notice (at most one a second); the session goes on.
func (p *peer) command(cc *wire.ClientCommand, spectator bool) error {
	cfg := p.srv.cfg
	refuse := func(reason refusedBy, why string) error {
		p.srv.sess.stats.refused(reason)
		if now := time.Now(); now.Sub(p.lastRefusal) >= time.Second {
			p.lastRefusal = now
			p.conn.sendPacket(&wire.ServerNotice{Kind: wire.NoticeInfo, Text: "Command refused: " + why})
		}
		return nil
	}
	switch {
	case spectator:
		return refuse(refusedSpectator, "spectators cannot send commands.")
	case len(cc.Payload) > cfg.Limits.MaxCommandPayload:
		return refuse(refusedInvalid, fmt.Sprintf("its payload of %d bytes is over the limit of %d.", len(cc.Payload), cfg.Limits.MaxCommandPayload))
	case cc.Kind >= lockstep.KindReserved && cc.Kind != lockstep.KindSetSpeed:
		return refuse(refusedInvalid, fmt.Sprintf("kind %#x is reserved.", cc.Kind))
	}
	if !p.cmdLimit.Take(time.Now(), cfg.Limits.CommandRate, float64(cfg.Limits.CommandBurst)) {
		return refuse(refusedRate, fmt.Sprintf("more than %.0f commands per second.", cfg.Limits.CommandRate))
	}
	if !p.srv.sess.submitCommand(lockstep.Command{MapID: cc.MapID, Kind: cc.Kind, Payload: cc.Payload, Player: p.id}) {
		return net.ErrClosed
	}
	return nil
}

// checkDefs compares the client's databases with the host's; a relay
// session awaiting its arbiter's declaration keeps them for the
// admission instead (relaydefs.go). A relay session whose databases are
// its arbiter's keeps them after the check too: the operator may clear
// the declaration before the client's admission, which checks them
// again, or takes them as the next declaration.
func (p *peer) checkDefs(hd *hostDefs, cd *wire.ClientDefs) error {
	if hd.awaiting {
		return p.keepDeclared(cd)
	}
	if d := defsRefusal(hd, cd); d != nil {
		return &protocolError{disc: d}
	}
	if p.srv.cfg.Relay.DefsFromArbiter {
		p.relay.declared = cd
	}
	return nil
}

// defsRefusal is the Defs refusal of a client that declared cd to a host
// whose databases are hd's (docs/protocol.md, section 4 id 1), or nil
// when they match.
func defsRefusal(hd *hostDefs, cd *wire.ClientDefs) *wire.ServerDisconnect {
	content := hd.content
	statuses, bad := compareDefs(content.Databases, cd.Databases)
	if len(bad) == 0 {
		return nil
	}
	missing := 0
	for _, h := range content.Databases {
		if !slices.ContainsFunc(cd.Databases, func(d wire.DefSummary) bool { return d.Type == h.Type }) {
			missing++
		}
	}
	d := &wire.ServerDisconnect{
		Reason: wire.ReasonDefs,
		Message: fmt.Sprintf("Your game content does not match the host's: %d of your %d def databases differ and %d of the host's %d are missing.",
			len(bad)-missing, len(cd.Databases), missing, len(content.Databases)),
		DefStatuses: statuses,
	}
	if h, _ := contentOffer(content.Share); h != nil {
		d.Message += " The host shares its mods' data: join again with --fetch-content to fetch what you lack."
	}
	if content.Detail != nil {
		if detail := content.Detail(bad); len(detail) <= wire.MaxDetailBytes {
			d.Detail = detail
		}
	}
	return d
}

// byteSize is n bytes for people: "16 KiB".
func byteSize(n float64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.3g MiB", n/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.3g KiB", n/(1<<10))
	}
	return fmt.Sprintf("%.0f bytes", n)
}

// ms is d in milliseconds with two decimals, for logs.
func ms(d time.Duration) float64 {
	return float64(d.Microseconds()/10) / 100
}
