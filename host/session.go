package host

import (
	"context"
	"errors"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/lockhost/lockhost/host/roster"
	"github.com/lockhost/lockhost/lockstep"
	"github.com/lockhost/lockhost/snapshot"
	"github.com/lockhost/lockhost/wire"
)

// member is an admitted client as the session sees it. The session
// goroutine creates it at admission and owns every plain field; the
// client's reader gets it in the join reply and writes only the three
// atomics, which the session reads each tick (see doc.go).
type member struct {
	id        int32  // fixed at admission
	name      string // fixed at admission
	conn      *conn  // fixed at admission
	spectator bool   // fixed at admission
	playing   bool   // past WorldReady and not a spectator: can hold time
	ready     bool   // past WorldReady: reports hashes, if it simulates
	// Written by its reader only (heard is set once at admission, before
	// the reader has the member), read by the session goroutine.
	acked    atomic.Uint64 // tick it reports having simulated
	heard    atomic.Int64  // when its reader last got a packet, unix nanoseconds
	rtt      atomic.Int64  // smoothed keepalive round trip, microseconds (0: none yet)
	shownRTT int64         // the round trip last broadcast, microseconds

	resync          *resyncState // a repair under way
	conduct         *conduct     // its budgets, shared with its rejoins
	lastCheck       uint64       // tick of the last hash report compared
	readyTick       uint64       // tick of its WorldReady
	readyAt         time.Time    // when its WorldReady came
	caughtUp        bool         // within Lag.MaxLag of the host since its WorldReady (lag.go)
	lagWhy          lagWhy       // whether its lag counted at the policy's last run, or why not
	hashedTick      uint64       // tick of its last hash report (0: none yet)
	unverified      bool         // playing without hash reports: see checkVerified
	lastCut         uint64       // tick of the last repair: reports up to it show the old state
	lastHashRefusal time.Time    // when the last refused-report notice went out
	since           time.Time    // when it was admitted
	point           *joinPoint   // the join point it is being sent, until WorldReady
	good            heldCheck    // the last hash report accepted (checked: there is one)
	checked         bool
	explaining      bool // its last desync is being explained (explain.go)
	heldRun         int  // held-world rejoins in a row without WorldReady, this one included (heldrejoin.go)
}

type joinReq struct {
	token      []byte // a rejoin, if set
	id         int32
	name       string
	spectator  bool
	passwordOK bool
	// arbiterClaim: the joiner sent an arbiter proof; arbiterOK: it
	// checked out against a relay host's secret (relay.go).
	arbiterClaim, arbiterOK bool
	// declared is the joiner's Client_Defs when the handshake could not
	// check it: a relay session awaiting its arbiter's declaration
	// (relaydefs.go). Nil when the handshake checked it.
	declared *wire.ClientDefs
	resume   []wire.HeldBlob // blobs held, on a retry before WorldReady
	held     *wire.HeldWorld // the world held, on a rejoin after WorldReady
	addr     string          // addrKey of the remote address, for bans
	conn     *conn
	reply    chan joinReply
}

type joinReply struct {
	err     error
	id      int32 // the player's ID: the new one, or the old one on a rejoin
	member  *member
	point   *joinPoint
	faction int32
	granted uint64
	cmds    []snapshot.MapCommands
	join    *joinProgress   // the join across its retries
	retries int             // the join's connections before this one
	held    map[uint64]bool // blob hashes the joiner holds: not sent again
	// uploader: the joiner is the arbiter of a new relay session, which
	// uploads the world instead of downloading it (relay.go).
	uploader bool
	// replayed: the joiner rejoins from the world it held, sent the
	// commands it missed instead of a world (heldrejoin.go).
	replayed bool
}

type readyReq struct {
	id        int32
	tick      uint64
	worldHash uint64
}

type latencyReq struct {
	id  int32
	rtt time.Duration
}

type leaveReq struct {
	id   int32
	conn *conn // the connection that left: a rejoin may have replaced it already
	why  string
	left bool // it sent Client_Leave: a leave on purpose, not a drop
}

// session owns the simulation, the roster and the members, and drives the
// parts that each keep one concern's state: join points, rejoin tokens,
// liveness, the lag policy, conduct budgets, desync tracking,
// autosaves and what it publishes. Only run, the session goroutine, touches them, except where a
// part's comment names another goroutine.
type session struct {
	cfg   Config
	stats *stats
	clock *lockstep.Clock
	auth  *lockstep.Authority

	roster  *roster.Roster
	members map[int32]*member
	order   []int32 // member IDs in admission order, for stable broadcast

	points    *joinPoints
	window    *cmdWindow // the commands of the rejoin window (cmdwindow.go)
	rec       *recorder  // the session's recording, nil when not recording (record.go)
	replays   *replays   // held-world rejoins' replays, kept and being built (replays.go)
	rejoins   rejoins
	tokenFile *tokenFile    // keeps the tokens beside the save (nil: no save)
	lastID    *atomic.Int32 // the highest player ID handed out (Server.nextID)
	uplink    *uplink       // the world transfers' slots, reviewed on the tick (Server.uplink)
	alive     liveness
	lag       lagPolicy
	conducts  *conducts
	desync    *desyncTracker
	autosave  autosave
	pub       publisher
	admin     adminState // the admin API's actions and ban list
	// mode is the kind of host the session is (mode.go): simulating, or
	// relay mode's relaySession, which is relay then (relay.go).
	mode  mode
	relay *relaySession
	// defs is the def databases joiners must match (defs.go): set by
	// New, and replaced only by a relay session's declaration
	// (relaydefs.go). Readers load it; the session goroutine stores it.
	defs atomic.Pointer[hostDefs]

	stopping chan struct{} // closed when the session starts to shut down
	joins    chan joinReq
	readies  chan readyReq
	latency  chan latencyReq
	leaves   chan leaveReq
	cmds     chan lockstep.Command
	hashes   chan hashReq
	calls    chan func() // work for the session goroutine (chat, the operator's say)
	done     chan struct{}
}

func newSession(cfg Config, sim lockstep.Sim) *session {
	st := &stats{}
	s := &session{
		cfg:      cfg,
		stats:    st,
		auth:     lockstep.NewAuthority(sim),
		roster:   roster.New(roster.Config{MaxPlayers: cfg.Limits.MaxPlayers, MaxSpectators: cfg.Limits.MaxSpectators, Factions: cfg.Factions}),
		members:  make(map[int32]*member),
		points:   newJoinPoints(cfg, st),
		window:   newCmdWindow(cfg.Join.RejoinWindow, cfg.Join.RejoinWindowBytes, sim.Tick()),
		replays:  newReplays(),
		rejoins:  rejoins{grace: cfg.Timeouts.RejoinGrace},
		alive:    liveness{every: cfg.Timeouts.KeepaliveEvery},
		conducts: newConducts(cfg),
		desync:   newDesyncTracker(cfg, sim),
		autosave: autosave{path: cfg.Save.Path, every: cfg.Save.Every},
		pub:      publisher{history: &history{obs: cfg.Observer}, samples: newSampleRing(cfg.Samples.Every, cfg.Samples.Keep)},
		stopping: make(chan struct{}),
		joins:    make(chan joinReq),
		readies:  make(chan readyReq, 64),
		latency:  make(chan latencyReq, 64),
		leaves:   make(chan leaveReq, 64),
		cmds:     make(chan lockstep.Command, 4096),
		hashes:   make(chan hashReq, 64),
		calls:    make(chan func(), 64),
		done:     make(chan struct{}),
	}
	s.mode = simulating{s}
	s.points.noteSections(sim)
	return s
}

// run is the session goroutine: the tick and everything that touches the
// simulation or the roster.
func (s *session) run(ctx context.Context) {
	defer close(s.done)
	s.desync.checkpointer = lockstep.NewCheckpointer(true, runtime.GOMAXPROCS(0), func(cp lockstep.Checkpoint) {
		select {
		case s.desync.cps <- cp:
		case <-s.stopping:
		}
	})
	s.pub.started = time.Now()
	if s.tokenFile != nil {
		go s.tokenFile.run()
		defer s.tokenFile.close()
	}
	s.alive.start(s.pub.started)
	s.clock = lockstep.NewClock(s.cfg.TickRate, s.pub.started)
	s.publishOverview(s.pub.started)
	s.startRecording()
	ticker := time.NewTicker(s.clock.Interval())
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			close(s.stopping)
			s.desync.checkpointer.Close()
			for _, id := range s.order {
				s.members[id].conn.close(wire.ReasonServerClosing, "")
			}
			s.startSave(true) // the final save, written before Serve returns
			s.stopRecording()
			s.persistTokens() // and the tokens as they are, written by the deferred close
			s.desync.reports.Wait()
			return
		case now := <-ticker.C:
			s.tick(now)
		case r := <-s.joins:
			s.join(r)
		case r := <-s.readies:
			s.ready(r)
		case r := <-s.latency:
			if s.roster.SetLatency(r.id, int32(r.rtt.Milliseconds())) == nil {
				if m := s.members[r.id]; m != nil {
					m.shownRTT = r.rtt.Microseconds() // what later changes are measured against
				}
				s.broadcastPacket(s.playerDelta(wire.PlayerListLatencies, r.id))
			}
		case r := <-s.leaves:
			s.leave(r)
		case c := <-s.cmds:
			s.auth.Submit(c)
		case r := <-s.hashes:
			s.checkHashes(r)
		case cp := <-s.desync.cps:
			s.addCheckpoint(cp)
		case fn := <-s.calls:
			fn()
		}
	}
}

// tick simulates the ticks the clock owes (making up late wake-ups, at
// most half a second's worth), or, while paused, applies the commands
// waiting.
func (s *session) tick(now time.Time) {
	// Take every command already waiting so it runs at this tick.
	for drained := false; !drained; {
		select {
		case c := <-s.cmds:
			s.auth.Submit(c)
		default:
			drained = true
		}
	}
	if !s.mode.keepsPoint() {
		s.points.expire(s.auth)
	}
	s.points.prepare(now, s.auth)
	s.advanceWindow(now)
	s.checkLiveness(now)
	s.uplink.review(now)
	s.persistTokens()
	defer s.publishOverview(now)
	if s.autosave.due(now) {
		s.startSave(false)
	}
	due := s.clock.Due(now, s.auth.Speed(), max(1, s.cfg.TickRate*lockstep.MaxSpeed/2))
	due = s.applyLagPolicy(due)
	due = s.mode.due(due)
	due = belowMaxTick(due, s.auth.Sim().Tick())
	s.checkVerified()
	if due == 0 {
		for s.auth.Pending() > 0 { // paused: commands still run, a batch a packet
			s.publish(s.auth.Advance(false))
		}
		return
	}
	for i := 0; i < due; {
		start := time.Now()
		res := s.auth.Advance(true)
		s.publish(res)
		if !res.Stepped {
			continue // one batch of a tick's commands; more of them follow
		}
		s.points.stepped(time.Since(start))
		i++
		if s.auth.Speed() == 0 { // a speed command applies from the next tick
			break
		}
	}
}

// belowMaxTick bounds due so that the clock at tick never passes
// lockstep.MaxTick. Worlds and saves past it are refused, so a session
// gets there only after centuries; it then stands still, its tick
// never wrapping.
func belowMaxTick(due int, tick uint64) int {
	if tick >= lockstep.MaxTick {
		return 0
	}
	return int(min(uint64(due), lockstep.MaxTick-tick))
}

func (s *session) publish(res lockstep.TickResult) {
	if len(res.Accepted) > 0 || len(res.Rejected) > 0 {
		s.stats.update(func(st *Stats) {
			st.Commands += uint64(len(res.Accepted))
			st.CommandsRefused += uint64(len(res.Rejected))
			st.RefusedInvalid += uint64(len(res.Rejected))
		})
	}
	for _, r := range res.Rejected {
		m := s.members[r.Cmd.Player]
		name := ""
		if m != nil {
			name = m.name
			m.conn.sendPacket(&wire.ServerNotice{Kind: wire.NoticeInfo, Text: "Command refused: " + r.Err.Error()})
		}
		s.cfg.Logger.Debug("command refused", "player", r.Cmd.Player, "name", name, "map", r.Cmd.MapID, "kind", r.Cmd.Kind, "err", r.Err)
	}
	if len(res.Accepted) > 0 {
		s.window.add(res.Accepted)
		s.desync.remember(res.Accepted, res.Granted)
		s.announce(res.Accepted)
	}
	if res.Stepped {
		s.mode.stepped(res)
	}
	s.recordTick(res)
	if s.cfg.AfterTick != nil {
		s.cfg.AfterTick(res, s.auth.Sim())
	}
	if !res.Stepped && len(res.Accepted) == 0 {
		return
	}
	frame, err := wire.Marshal(nil, &wire.ServerTick{
		Tick: res.Tick, Commands: res.Accepted, Granted: res.Granted, Speed: s.auth.Speed(),
	})
	if err != nil {
		s.cfg.Logger.Error("encode tick", "err", err)
		return
	}
	s.broadcast(frame)
}

func (s *session) broadcast(frame []byte) {
	for _, id := range s.order {
		s.members[id].conn.send(frame)
	}
}

func (s *session) broadcastPacket(p wire.Packet) {
	frame, err := wire.Marshal(nil, p)
	if err != nil {
		s.cfg.Logger.Error("encode packet", "packet", p.ID(), "err", err)
		return
	}
	s.broadcast(frame)
}

func playerInfo(p *roster.Player) wire.PlayerInfo {
	return wire.PlayerInfo{ID: p.ID, Name: p.Name, Faction: p.Faction, Status: wire.PlayerStatus(p.Status),
		Spectator: p.Spectator, LatencyMs: p.LatencyMs}
}

// playerList is the whole list, for a newcomer.
func (s *session) playerList() *wire.ServerPlayerList {
	list := s.roster.List()
	out := &wire.ServerPlayerList{Action: wire.PlayerListFull, Players: make([]wire.PlayerInfo, len(list))}
	for i := range list {
		out.Players[i] = playerInfo(&list[i])
	}
	return out
}

// playerDelta is one player's row as a delta for everyone else.
func (s *session) playerDelta(action wire.PlayerListAction, id int32) *wire.ServerPlayerList {
	if p := s.roster.Get(id); p != nil {
		return &wire.ServerPlayerList{Action: action, Players: []wire.PlayerInfo{playerInfo(p)}}
	}
	return &wire.ServerPlayerList{Action: action, Players: []wire.PlayerInfo{{ID: id}}}
}

// join answers a join request, unless its admission waits for a replay
// to be built (replays.go), which answers it then.
func (s *session) join(r joinReq) {
	if rep, ok := s.admit(r); ok {
		r.reply <- rep
	}
}

// admissionReason maps a roster rule to its disconnect reason.
func admissionReason(err error) wire.Reason {
	switch {
	case errors.Is(err, roster.ErrNameLength):
		return wire.ReasonUsernameLength
	case errors.Is(err, roster.ErrNameChars):
		return wire.ReasonUsernameChars
	case errors.Is(err, roster.ErrNameTaken):
		return wire.ReasonUsernameAlreadyOnline
	case errors.Is(err, roster.ErrFull):
		return wire.ReasonServerFull
	case errors.Is(err, roster.ErrSpectatorsFull):
		return wire.ReasonSpectatorsFull
	case errors.Is(err, errBadPassword):
		return wire.ReasonBadPassword
	case errors.Is(err, errBadToken):
		return wire.ReasonBadToken
	case errors.Is(err, errBadResume):
		return wire.ReasonBadPacket
	case errors.Is(err, errResumeStalled):
		return wire.ReasonRateLimited
	case errors.Is(err, errBadArbiter):
		return wire.ReasonBadArbiterSecret
	}
	return wire.ReasonGeneric
}

// queuedCommands copies the commands queued since the join point, per map,
// as a joiner or a save replays them on top of it.
func (s *session) queuedCommands() []snapshot.MapCommands {
	ids, cmds := s.auth.Queues().Snapshot()
	mc := make([]snapshot.MapCommands, len(ids))
	for i := range ids {
		mc[i] = snapshot.MapCommands{MapID: ids[i], Commands: cmds[i]}
	}
	return mc
}

func (s *session) ready(r readyReq) {
	p := s.roster.Get(r.id)
	if p == nil {
		return
	}
	st := wire.StatusPlaying
	if p.Spectator {
		st = wire.StatusSpectating
	}
	_ = s.roster.SetStatus(r.id, st)
	s.rejoins.joinDone(r.id)
	if m := s.members[r.id]; m != nil {
		m.playing = !p.Spectator // its reader stored the ready tick as acked before asking
		m.ready = true
		m.readyTick = r.tick
		m.readyAt, m.caughtUp = time.Now(), false
		m.heldRun = 0 // its rejoin made progress
		s.points.release(m.point)
		m.point = nil
	}
	s.mode.ready(r.id)
	s.cfg.Logger.Info("player ready", "player", r.id, "name", p.Name, "status", st.String(), "tick", r.tick, "host_tick", s.auth.Sim().Tick())
	s.broadcastPacket(s.playerDelta(wire.PlayerListStatus, r.id))
}

func (s *session) leave(r leaveReq) {
	m := s.members[r.id]
	if m == nil || r.conn != nil && m.conn != r.conn {
		return
	}
	m.conduct.last = time.Now()
	s.noteLeave(m, r)
	s.dropMember(r.id)
	s.rejoins.left(r.id, time.Now(), heldOf(m))
	notices, ok := s.roster.Remove(r.id, r.why)
	if !ok {
		return
	}
	s.broadcastPacket(&wire.ServerPlayerList{Action: wire.PlayerListRemove, Players: []wire.PlayerInfo{{ID: r.id}}})
	for _, n := range notices {
		s.broadcastPacket(&wire.ServerNotice{Kind: wire.NoticeKind(n.Kind), Text: n.Text})
	}
}

func (s *session) dropMember(id int32) {
	if m := s.members[id]; m != nil {
		s.points.release(m.point)
		m.point = nil
	}
	s.mode.gone(id)
	delete(s.members, id)
	for i, o := range s.order {
		if o == id {
			s.order = append(s.order[:i], s.order[i+1:]...)
			break
		}
	}
}

// submitCommand hands a command from a playing client to the session.
func (s *session) submitCommand(c lockstep.Command) bool {
	select {
	case s.cmds <- c:
		return true
	case <-s.done:
		return false
	}
}
