package host

import (
	"cmp"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/lockhost/lockhost/host/relay"
	"github.com/lockhost/lockhost/lockstep"
	"github.com/lockhost/lockhost/snapshot"
	"github.com/lockhost/lockhost/wire"
)

// Relay mode (docs/protocol.md, section 14): the host runs no simulation.
// The session drives a relay.World in its place, and the world comes from
// the arbiter, the client that proved the arbiter secret, which uploads
// it when the host asks. This file is the session's side of it; the
// reader's side (the handshake's proof, the uploads) is in relaypeer.go.

// RelayConfig is relay mode's part of Config. NewRelay turns relay mode
// on; New ignores it.
type RelayConfig struct {
	// ArbiterSecret is what the arbiter proves it holds
	// (docs/protocol.md, section 14.2). Without it no client can be the
	// arbiter, and a new session never gets a world.
	ArbiterSecret []byte
	// UploadLimit is the most bytes one upload may have (0:
	// wire.DefaultUploadLimit).
	UploadLimit uint64
	// WorldRawLimit is the most raw bytes an upload's blobs may declare
	// in all (0: 1 GiB). The host inflates nothing it takes except to
	// transcode a point for a joiner that reads only gzip, which this
	// bounds too (docs/protocol.md, section 14.4).
	WorldRawLimit uint64
	// UploadWait is how long a joiner waits for the arbiter's upload of
	// its join point before it is refused (0: 20 s).
	UploadWait time.Duration
	// Resume, if set, starts the session from a save's payload (saves.File's
	// ReadBody) instead of waiting for the arbiter's world.
	Resume *snapshot.Parsed
	// DefsFromArbiter takes the def databases joiners must match from the
	// first arbiter's Client_Defs, its declaration (docs/protocol.md,
	// section 14.9), instead of from the content NewRelay is given, whose
	// Databases must then be empty; a session resumed from a save gives
	// there the databases the save recorded (saves.Meta's).
	DefsFromArbiter bool

	// GameName is the session name a relay host announces when
	// Config.GameName is empty (default "lockhost relay"): a relay host
	// serves whatever game its arbiter plays.
	GameName string

	enabled bool // set by NewRelay
}

// NewRelay returns a relay host: the session runs no simulation, and its
// world comes from the arbiter's uploads. Desync detection is off (the
// host has no state to compare hashes with) and join points are made
// only when a joiner needs one. The arbiter's state hashes are the
// reference every other player's are compared with, and a repair is the
// arbiter's upload of the maps that differ. A save holds the latest join
// point and the commands since, its blobs as uploaded; with
// Relay.Resume the session starts from one.
func NewRelay(cfg Config, content Content) (*Server, error) {
	cfg.Relay.enabled = true
	if cfg.GameName == "" {
		cfg.GameName = cmp.Or(cfg.Relay.GameName, DefaultConfig().Relay.GameName)
	}
	cfg.Join.LazyJoinPoints = true
	if d := DefaultConfig().Relay; cfg.Relay.UploadLimit == 0 {
		cfg.Relay.UploadLimit = d.UploadLimit
	}
	if d := DefaultConfig().Relay; cfg.Relay.UploadWait == 0 {
		cfg.Relay.UploadWait = d.UploadWait
	}
	if d := DefaultConfig().Relay; cfg.Relay.WorldRawLimit == 0 {
		cfg.Relay.WorldRawLimit = d.WorldRawLimit
	}
	rs := &relaySession{reqs: map[uint32]*relayReq{}, dropped: map[uint32]bool{}, limit: cfg.Relay.UploadLimit}
	rs.world = relay.NewWorld(rs.ask, rs.applied, cfg.Relay.UploadWait)
	srv, err := New(cfg, content, rs.world)
	if err != nil {
		return nil, err
	}
	rs.sess, rs.log = srv.sess, srv.cfg.Logger
	srv.sess.relay, srv.sess.mode = rs, rs
	if err := srv.sess.relayDefsInit(content); err != nil {
		return nil, err
	}
	if r := cfg.Relay.Resume; r != nil {
		if err := srv.sess.relayResume(r); err != nil {
			return nil, fmt.Errorf("resume the relay session: %w", err)
		}
	}
	return srv, nil
}

// relayResume starts the session from a save: its join point is the
// save's, its command log the save's commands, and its clock the save's
// grant. Before the session runs.
func (s *session) relayResume(p *snapshot.Parsed) error {
	h := p.Header
	if h.Granted > lockstep.MaxTick {
		return fmt.Errorf("the save's tick %d is past the last tick a session reaches, %d", h.Granted, uint64(lockstep.MaxTick))
	}
	if len(p.Maps) != len(h.Maps) {
		return fmt.Errorf("%d map blobs for %d maps", len(p.Maps), len(h.Maps))
	}
	pt := &snapshot.Point{Tick: h.Tick, World: p.World, WorldHash: h.WorldHash, Maps: make([]snapshot.MapPoint, len(h.Maps))}
	for i, m := range h.Maps {
		pt.Maps[i] = snapshot.MapPoint{ID: m.ID, Blob: p.Maps[i], StateHash: m.StateHash}
	}
	if err := s.relayStart(pt, "save"); err != nil {
		return err
	}
	var cmds []lockstep.Command
	for _, mc := range h.Commands {
		for _, c := range mc.Commands {
			if c.Tick < h.Tick || c.Tick > h.Granted {
				return fmt.Errorf("a saved command at tick %d, outside the save's %d to %d", c.Tick, h.Tick, h.Granted)
			}
			cmds = append(cmds, c)
		}
	}
	// In the order applied, across maps, so that the Authority counts the
	// commands of the saved grant's tick (engine commands too) and the
	// next one of that tick follows them.
	slices.SortStableFunc(cmds, func(a, b lockstep.Command) int {
		return cmp.Or(cmp.Compare(a.Tick, b.Tick), cmp.Compare(a.Seq, b.Seq))
	})
	s.relay.world.Resume(h.Granted)
	for _, c := range cmds {
		if err := s.auth.Replay(c); err != nil {
			return fmt.Errorf("replay the saved commands: %w", err)
		}
	}
	return nil
}

// relaySession is the session's relay state. The session goroutine owns
// it, except the requests (reqs, dropped), which the arbiters' readers
// look up as uploads come, behind mu.
type relaySession struct {
	sess  *session
	world *relay.World
	log   *slog.Logger
	limit uint64

	active   int32   // member ID of the active arbiter; 0: none
	standby  []int32 // ready arbiters that are not active, longest ready first
	arbiters map[int32]bool
	nextQ    uint32
	votes    relayVotes // the checkpoints decided without an arbiter (relaymajority.go)

	mu      sync.Mutex
	reqs    map[uint32]*relayReq // requests not answered yet, by q
	dropped map[uint32]bool      // requests answered or cancelled: late chunks are dropped
}

// relayReq is one upload request.
type relayReq struct {
	pkt  wire.ServerUploadRequest
	cut  *relay.Cut // the join point it fills (kind 1)
	to   int32      // the arbiter it went to; 0: none yet
	sent time.Time
	// repaired, for a repair's request, takes the upload, on the
	// arbiter's reader; player is the member being repaired.
	repaired func(*snapshot.Point)
	player   int32
}

// relayRawLimit is the bound of a transcode of the session's points: a
// relay host's world limit, none on a simulating host (its blobs are its
// own).
func (c Config) relayRawLimit() uint64 {
	if !c.Relay.enabled {
		return 0
	}
	return c.Relay.WorldRawLimit
}

// errBadArbiter is the arbiter rule, checked after the password: a proof
// that does not check out, or one sent to a host that is not a relay host.
var errBadArbiter = errors.New("wrong arbiter secret")

// reasonError is a refusal with its own reason and sentence.
type reasonError struct {
	reason wire.Reason
	msg    string
}

func (e *reasonError) Error() string { return e.msg }

// errNoWorld refuses a player while a new relay session has no world.
var errNoWorld = &reasonError{reason: wire.ReasonGeneric,
	msg: "The session has no world yet: its arbiter has not uploaded it. Join again shortly."}

// errSpectatorArbiter refuses an arbiter proof with a spectator's token:
// an arbiter never spectates (docs/protocol.md, section 14.1).
var errSpectatorArbiter = &reasonError{reason: wire.ReasonBadPacket,
	msg: "This token rejoins a spectator, and a spectator cannot be the session's arbiter: rejoin without the arbiter proof, or join again without the token."}

// arbiterRule is the arbiter's admission rule (docs/protocol.md, section
// 14.2): a claimed arbiter must have proved the secret; in a relay
// session with no world yet only an arbiter is admitted.
func (rs *relaySession) arbiterRule(r joinReq) error {
	if r.arbiterClaim && !r.arbiterOK {
		return errBadArbiter
	}
	if r.arbiterClaim && r.spectator {
		// Only a rejoin gets here (Client_Username refuses a and s
		// together): its token, not its s, says it spectates.
		return errSpectatorArbiter
	}
	if !rs.world.HasWorld() && !r.arbiterOK {
		return errNoWorld
	}
	if !r.arbiterOK && rs.sess.defs.Load().awaiting {
		return errAwaitingDefs // the operator cleared the declaration (relaydefs.go)
	}
	return nil
}

// joinPoint finishes the admission of m in a relay session. The first
// arbiter of a new session gets an upload request instead of a world
// (uploader); any other joiner the current join point, which a relay host
// cuts only when an arbiter can upload it and which an arbiter never
// waits on. A resumed download (held) changes nothing here: the point is
// refreshed only by the relay's own rule (relayRefresh).
func (rs *relaySession) joinPoint(r joinReq, m *member, _ map[uint64]bool) (point *joinPoint, uploader bool, err error) {
	s := rs.sess
	if r.arbiterOK {
		if rs.arbiters == nil {
			rs.arbiters = map[int32]bool{}
		}
		rs.arbiters[m.id] = true
	}
	if !rs.world.HasWorld() {
		// Only an arbiter gets here (arbiterRule): it uploads the world.
		if rs.active != 0 {
			return nil, false, errors.New("another arbiter is uploading the world")
		}
		rs.active = m.id
		s.relayDeclare(r, m)
		rs.send(rs.request(wire.UploadWorld, 0, 0, nil))
		s.cfg.Logger.Info("arbiter asked for the world", "player", m.id, "name", m.name)
		return nil, true, nil
	}
	if r.arbiterOK {
		s.relayDeclare(r, m) // after the operator cleared the declaration
	}
	if r.arbiterOK && s.points.current != nil {
		return s.points.current, false, nil // an arbiter never waits on an upload
	}
	s.relayRefresh()
	point, err = s.points.ensure(s.auth)
	if err == nil && rs.active == 0 && !point.uploaded() {
		r.conn.sendPacket(&wire.ServerNotice{Kind: wire.NoticeInfo, Text: "Waiting for the session's arbiter to upload the world."})
	}
	return point, false, err
}

// relayCut is the upload a join point cut from state waits for, when the
// host is a relay host (state is then a relay.Cut); else nil.
func relayCut(state snapshot.State) *relay.Cut {
	c, _ := state.(*relay.Cut)
	return c
}

// due holds a new relay session's clock until its world is there.
func (rs *relaySession) due(due int) int {
	if !rs.world.HasWorld() {
		return 0
	}
	return due
}

// keepsPoint reports that a relay session keeps its current join point
// however old, since the point and the commands since it are its only
// copy of the world (what its saves hold). It replaces the point when a
// joiner comes (relayRefresh).
func (rs *relaySession) keepsPoint() bool { return true }

// stepped decides the checkpoints: a relay host's are its arbiter's
// reports (reference), or without an arbiter its players' majority.
func (rs *relaySession) stepped(lockstep.TickResult) { rs.sess.relayDecide() }

// report takes the active arbiter's report as the reference, or a
// player's as a vote while no arbiter is active.
func (rs *relaySession) report(m *member, r hashReq) bool {
	return rs.sess.relayReference(m, r) || rs.sess.relayVote(m, r)
}

// repair asks the arbiter for the state that repairs m, or holds the
// repair while no arbiter is active (relayRepairWaits); a relay host
// always provides it.
func (rs *relaySession) repair(m *member, st *resyncState) bool {
	if !rs.sess.relayRepairWaits(m, st) {
		rs.sess.relayResync(m, st) // the repair comes from the arbiter's upload
	}
	return true
}

// repairWaits reports whether a repair would wait for an arbiter.
func (rs *relaySession) repairWaits() bool { return rs.active == 0 }

// relayRefresh drops a relay session's current join point, so that the
// joiner being admitted gets a new one from the arbiter, when it is older
// than the join-point age limit, uploaded, and an arbiter can make the
// next: otherwise it stays, with every command since.
// A point whose upload has not come within the wait limit is given up
// the same way: its request is cancelled and the joiners still waiting
// on it are refused.
func (s *session) relayRefresh() {
	cur := s.points.current
	if cur == nil || s.relay.active == 0 {
		return
	}
	age := time.Since(cur.cutAt)
	switch {
	case cur.uploaded() && age > s.points.maxAge:
	case !cur.uploaded() && age > s.cfg.Relay.UploadWait:
		s.relay.cancel(cur.upload)
	default:
		return
	}
	s.points.current = nil
	s.auth.Queues().Reset()
}

// cancel gives up the request that fills c: the arbiter it went to is
// told, and whoever waits on c is refused.
func (rs *relaySession) cancel(c *relay.Cut) {
	rs.mu.Lock()
	var q uint32
	var to int32
	for id, r := range rs.reqs {
		if r.cut == c {
			q, to = id, r.to
			delete(rs.reqs, id)
			rs.dropped[id] = true
		}
	}
	rs.mu.Unlock()
	c.Fail(fmt.Errorf("tick %d: %w", c.Tick(), relay.ErrWaitedTooLong))
	if m := rs.sess.members[to]; m != nil && q != 0 {
		m.conn.sendPacket(&wire.ServerUploadResult{Request: q, Result: wire.UploadCancelled})
	}
	rs.log.Warn("join point request cancelled: no upload within the wait", "request", q, "tick", c.Tick(), "arbiter", to)
}

// saves reports whether the session has anything to save: a relay
// session has nothing before its world comes.
func (rs *relaySession) saves() bool { return rs.world.HasWorld() }

// painter is none: a relay host keeps its arbiter's world as bytes and
// runs none of its own to draw.
func (rs *relaySession) painter() (MapPainter, string) {
	return nil, "a relay host runs no world of its own to draw"
}

// ready makes a ready arbiter active when none is, or a standby.
func (rs *relaySession) ready(id int32) {
	if !rs.arbiters[id] || rs.active == id {
		return
	}
	if rs.active != 0 {
		rs.standby = append(rs.standby, id)
		return
	}
	rs.activate(id)
}

// gone takes a leaving member out of the arbiters; when it was the
// active one, the standby ready longest takes over, with the requests
// still unanswered.
func (rs *relaySession) gone(id int32) {
	s := rs.sess
	if !rs.arbiters[id] {
		return
	}
	delete(rs.arbiters, id)
	rs.standby = slices.DeleteFunc(rs.standby, func(o int32) bool { return o == id })
	if rs.active != id {
		return
	}
	rs.active = 0
	if !rs.world.HasWorld() {
		// The first upload went with it: the next arbiter to arrive is
		// asked again.
		rs.mu.Lock()
		for q, r := range rs.reqs {
			if r.pkt.Kind == wire.UploadWorld {
				delete(rs.reqs, q)
				rs.dropped[q] = true
			}
		}
		rs.mu.Unlock()
	}
	s.relayOrphaned(id)
	s.cfg.Logger.Warn("arbiter left", "player", id, "standby", len(rs.standby))
	if len(rs.standby) > 0 {
		next := rs.standby[0]
		rs.standby = rs.standby[1:]
		rs.activate(next)
	}
}

// relayOrphaned ends the requests the leaving arbiter id had not
// answered. None is handed to the next arbiter: each names a cut at a
// tick the session has gone on from, and another arbiter, following the
// game, has most likely simulated past it and could not hold there. The
// joiners waiting on a join point are refused (Timeout: the join tool
// joins again by itself, from a point the next arbiter uploads), and a
// player held at a repair's cut is told to join again for a fresh copy
// of the world. Session goroutine.
func (s *session) relayOrphaned(id int32) {
	rs := s.relay
	rs.mu.Lock()
	var gone []*relayReq
	for q, r := range rs.reqs {
		if r.to == id && r.pkt.Kind != wire.UploadWorld {
			gone = append(gone, r)
			delete(rs.reqs, q)
			rs.dropped[q] = true
		}
	}
	rs.mu.Unlock()
	for _, r := range gone {
		switch {
		case r.cut != nil:
			r.cut.Fail(fmt.Errorf("tick %d: %w", r.cut.Tick(), relay.ErrArbiterLeft))
			if cur := s.points.current; cur != nil && cur.upload == r.cut {
				// The next joiner gets a point cut anew.
				s.points.current = nil
				s.auth.Queues().Reset()
			}
			s.cfg.Logger.Warn("join point request dropped: the arbiter left before it uploaded", "request", r.pkt.Request, "tick", r.pkt.Tick)
		case r.player != 0:
			if m := s.members[r.player]; m != nil && m.resync != nil {
				m.conn.close(wire.ReasonTimeout, "the session's arbiter left before it could repair your game; join again for a fresh copy of the world")
			}
			s.cfg.Logger.Warn("repair dropped: the arbiter left before it uploaded", "request", r.pkt.Request, "player", r.player, "tick", r.pkt.Tick)
		}
	}
}

// activate makes id the active arbiter and sends it every request not
// answered yet, oldest first.
func (rs *relaySession) activate(id int32) {
	rs.active = id
	rs.log.Info("arbiter active", "player", id)
	rs.mu.Lock()
	open := make([]*relayReq, 0, len(rs.reqs))
	for _, r := range rs.reqs {
		open = append(open, r)
	}
	rs.mu.Unlock()
	slices.SortFunc(open, func(a, b *relayReq) int { return int(a.pkt.Request) - int(b.pkt.Request) })
	for _, r := range open {
		rs.send(r)
	}
}

// request registers a new request. Session goroutine only.
func (rs *relaySession) request(kind wire.UploadKind, tick uint64, applied uint32, cut *relay.Cut) *relayReq {
	rs.nextQ++
	r := &relayReq{pkt: wire.ServerUploadRequest{Request: rs.nextQ, Kind: kind, Tick: tick, Applied: applied, Limit: rs.limit}, cut: cut}
	rs.mu.Lock()
	rs.reqs[r.pkt.Request] = r
	rs.mu.Unlock()
	return r
}

// send sends r to the active arbiter, if there is one. Session goroutine
// only: the request goes on the ordered stream between two ticks.
func (rs *relaySession) send(r *relayReq) {
	m := rs.sess.members[rs.active]
	if m == nil {
		return
	}
	rs.mu.Lock()
	r.to, r.sent = rs.active, time.Now()
	rs.mu.Unlock()
	m.conn.sendPacket(&r.pkt)
}

// applied is the World's count of the commands applied at the current
// tick: the Authority's, engine commands included. Session goroutine.
func (rs *relaySession) applied() uint32 { return rs.sess.auth.Applied() }

// ask is the World's hook: a join point was cut at (tick, applied) and
// must be uploaded. Session goroutine (inside a cut).
func (rs *relaySession) ask(c *relay.Cut) {
	r := rs.request(wire.UploadJoinPoint, c.Tick(), c.Applied(), c)
	if rs.active == 0 {
		// The arbiter that would have uploaded the point kept left with
		// it (relayOrphaned): the next arbiter active gets the request.
		rs.log.Info("join point request waits for an arbiter", "request", r.pkt.Request, "tick", c.Tick(), "applied", c.Applied())
		return
	}
	rs.send(r)
	rs.log.Info("join point asked of the arbiter", "request", r.pkt.Request, "tick", c.Tick(), "applied", c.Applied(), "arbiter", rs.active)
}

// lookup finds the open request q sent to arbiter id. dropped is true for
// a request answered or cancelled, whose late chunks are dropped.
func (rs *relaySession) lookup(q uint32, id int32) (r *relayReq, dropped bool) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if r := rs.reqs[q]; r != nil && r.to == id {
		return r, false
	}
	return nil, rs.dropped[q]
}

// close ends request q: answered (refused or accepted) or cancelled.
// Chunks of it that come later are dropped. It reports false when q was
// no longer open.
func (rs *relaySession) close(q uint32) (*relayReq, bool) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	r := rs.reqs[q]
	if r == nil {
		return nil, false
	}
	delete(rs.reqs, q)
	rs.dropped[q] = true
	return r, true
}

// relayStart takes the arbiter's first upload, or a save's join point
// (from says which: "arbiter", "save"), as the session's world, on the
// session goroutine: the clock moves to its tick, the command log starts
// there and the point is the current join point. It reports whether the
// world was taken (a second world is not).
func (s *session) relayStart(pt *snapshot.Point, from string) error {
	rs := s.relay
	if rs.world.HasWorld() {
		return errors.New("the session has a world already")
	}
	if s.auth.Pending() > 0 {
		return fmt.Errorf("%d commands wait for a world", s.auth.Pending())
	}
	if pt.Tick > lockstep.MaxTick {
		return fmt.Errorf("a world at tick %d, past the last tick a session reaches, %d", pt.Tick, uint64(lockstep.MaxTick))
	}
	rs.world.Start(pt)
	s.auth.Queues().Reset()
	c := relay.NewCut(pt.Tick, 0, 0)
	c.Deliver(pt)
	s.points.current = &joinPoint{state: c, upload: c, cutAt: time.Now(), tick: pt.Tick, stats: s.stats, log: s.cfg.Logger,
		comp: s.points.comp, rawLimit: s.points.rawLimit}
	msg := "world uploaded"
	if from == "save" {
		msg = "world resumed from the save"
	}
	s.cfg.Logger.Info(msg, "tick", pt.Tick, "maps", len(pt.Maps), "bytes", pt.CompressedSize(), "raw_bytes", pt.RawSize())
	return nil
}

// relayReference takes the active arbiter's hash report as the host's
// checkpoint at its tick, which the other players' reports are compared
// with; it reports whether r was the arbiter's. Session goroutine.
func (s *session) relayReference(m *member, r hashReq) bool {
	if m.id != s.relay.active || r.r == nil {
		return false
	}
	rep := r.r
	m.hashedTick = max(m.hashedTick, rep.Tick) // the reference is verified by definition
	if rep.Tick <= s.desync.ring.Newest() && s.desync.ring.Newest() != 0 {
		return true // an earlier arbiter's checkpoint stands
	}
	cp := lockstep.Checkpoint{Tick: rep.Tick, World: rep.World, Maps: make([]lockstep.MapCheckpoint, len(rep.Maps))}
	for i, mh := range rep.Maps {
		cp.Maps[i] = lockstep.MapCheckpoint{ID: mh.MapID, Hash: mh.Hash, Parts: mh.Parts}
	}
	slices.SortFunc(cp.Maps, func(a, b lockstep.MapCheckpoint) int { return cmp.Compare(a.ID, b.ID) })
	m.good, m.checked = heldCheck{tick: rep.Tick, world: rep.World}, true // the reference is accepted by definition
	s.addCheckpoint(cp)
	return true
}

// relayResync starts the repair of m in a relay session: the client
// holds at the cut now, and the arbiter is asked for the maps that
// differ at that cut (the whole world when full); its upload goes to the
// client as the repair. Session goroutine.
func (s *session) relayResync(m *member, rs *resyncState) {
	applied := s.auth.Applied()
	m.conn.sendPacket(&wire.ServerResync{Tick: rs.cut, Applied: applied, Maps: rs.maps, Full: rs.full})
	m.lastCut = rs.cut
	m.resync = rs
	m.playing = false // repaired players do not hold time for the others
	kind, maps := wire.UploadMaps, rs.maps
	if rs.full {
		kind, maps = wire.UploadJoinPoint, nil
	}
	r := s.relay.request(kind, rs.cut, applied, nil)
	r.pkt.Maps, r.player = maps, m.id
	log, c, id, comp, limit := s.cfg.Logger, m.conn, m.id, s.points.compression(m.conn.codec), s.points.rawLimit
	r.repaired = func(pt *snapshot.Point) {
		rs.world.Store(pt.WorldHash)
		rs.worldKnown.Store(true)
		if comp.Codec == snapshot.Gzip && !allGzip(pt) {
			var err error
			if pt, err = snapshot.Transcode(pt, comp, 0, limit); err != nil {
				log.Error("transcode a repair", "player", id, "err", err)
				c.close(wire.ReasonGeneric, "the host could not build the state to repair yours")
				return
			}
		}
		pl, err := snapshot.NewPayload(pt, 0, pt.Tick, nil)
		if err != nil {
			log.Error("lay out a repair", "player", id, "err", err)
			c.close(wire.ReasonGeneric, "the host could not build the state to repair yours")
			return
		}
		log.Info("sending repair", "player", id, "tick", pt.Tick, "maps", rs.maps, "full", rs.full, "bytes", pl.Total(), "from", "arbiter")
		c.startTransfer(newRepairTransfer(pl))
	}
	s.relay.send(r)
	s.cfg.Logger.Info("repair asked of the arbiter", "player", m.id, "request", r.pkt.Request, "tick", rs.cut, "maps", rs.maps, "full", rs.full)
}

// allGzip reports whether every blob of pt is gzip.
func allGzip(pt *snapshot.Point) bool {
	return pt.World.Codec == snapshot.Gzip && !slices.ContainsFunc(pt.Maps, func(m snapshot.MapPoint) bool { return m.Blob.Codec != snapshot.Gzip })
}
