package host

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lockhost/lockhost/lockstep"
	"github.com/lockhost/lockhost/roster"
	"github.com/lockhost/lockhost/snapshot"
	"github.com/lockhost/lockhost/wire"
)

// joinPoint is a cut of the simulation that joiners share. The session
// goroutine only freezes the state (a clone when the simulation can clone
// itself, else an encoded copy); the first joiner that needs the
// compressed form builds it, off the session goroutine, and the others
// wait for that one result.
type joinPoint struct {
	state    snapshot.State
	versions []uint64
	prev     *snapshot.Point
	cutAt    time.Time
	stats    *stats
	log      *slog.Logger
	once     sync.Once
	point    *snapshot.Point
	err      error
}

func (j *joinPoint) compressed(level int) (*snapshot.Point, error) {
	j.once.Do(func() {
		start := time.Now()
		j.point, j.err = snapshot.Build(j.state, snapshot.BuildOptions{Level: level, Prev: j.prev, Versions: j.versions})
		j.state, j.prev = nil, nil // the compressed form is all anyone needs now
		if j.err == nil {
			d := time.Since(start)
			j.stats.built(j.point, d)
			j.log.Info("join point built", "tick", j.point.Tick, "build_ms", float64(d.Microseconds())/1000,
				"raw_bytes", j.point.RawSize(), "bytes", j.point.CompressedSize(),
				"blobs_compressed", j.point.Compressed, "blobs_reused", j.point.Reused)
		}
	})
	return j.point, j.err
}

// cutJoinPoint freezes the simulation as the new join point and resets the
// command queues to start there.
func (s *session) cutJoinPoint() error {
	sim := s.auth.Sim()
	start := time.Now()
	state, err := freeze(sim)
	if err != nil {
		return err
	}
	s.point = &joinPoint{state: state, versions: snapshot.Versions(sim), prev: s.stats.lastPoint(),
		cutAt: time.Now(), stats: s.stats, log: s.cfg.Logger}
	cut := time.Since(start)
	s.stats.cut(cut)
	s.cfg.Logger.Debug("join point cut", "tick", sim.Tick(), "cut_ms", float64(cut.Microseconds())/1000)
	s.auth.Queues().Reset()
	return nil
}

// prepareJoinPoint keeps a built join point ready so a joiner does not wait
// for compression: when there is none, it cuts one and builds it in the
// background, but not while another build runs and not more often than
// every twenty build times, which bounds the background work at about 5%
// of a core.
func (s *session) prepareJoinPoint(now time.Time) {
	if s.cfg.LazyJoinPoints || s.point != nil || s.preparing.Load() {
		return
	}
	if st := s.stats.snapshot(); now.Sub(s.lastPrepared) < 20*st.LastBuild {
		return
	}
	if err := s.cutJoinPoint(); err != nil {
		s.cfg.Logger.Error("cut join point", "err", err)
		return
	}
	s.lastPrepared = now
	s.preparing.Store(true)
	jp, level := s.point, s.cfg.GzipLevel
	go func() {
		defer s.preparing.Store(false)
		if _, err := jp.compressed(level); err != nil {
			s.cfg.Logger.Error("build join point", "err", err)
		}
	}()
}

// freeze takes the state a join point is built from, on the session
// goroutine: a clone if the simulation offers one (a copy, not an
// encoding), else the encoded state.
func freeze(sim lockstep.Sim) (snapshot.State, error) {
	if c, ok := sim.(lockstep.Cloner); ok {
		return c.Clone(), nil
	}
	raw, err := snapshot.Cut(sim)
	if err != nil {
		return nil, err
	}
	return raw.State(), nil
}

// member is an admitted client as the session sees it.
type member struct {
	id        int32
	name      string
	conn      *conn
	spectator bool
	playing   bool          // past WorldReady and not a spectator: can hold time
	acked     atomic.Uint64 // tick it reports having simulated (written by its reader)
	heard     atomic.Int64  // when its reader last got a packet, unix nanoseconds
	rtt       atomic.Int64  // smoothed keepalive round trip, microseconds (0: none yet)
	shownRTT  int64         // the round trip last broadcast, microseconds

	resync          *resyncState // a repair under way
	conduct         *conduct     // its budgets, shared with its rejoins
	lastCheck       uint64       // tick of the last hash report compared
	lastCut         uint64       // tick of the last repair: reports up to it show the old state
	lastHashRefusal time.Time    // when the last refused-report notice went out
	since           time.Time    // when it was admitted
}

type joinReq struct {
	token      []byte // a rejoin, if set
	id         int32
	name       string
	spectator  bool
	passwordOK bool
	conn       *conn
	reply      chan joinReply
}

type joinReply struct {
	err     error
	id      int32 // the player's ID: the new one, or the old one on a rejoin
	member  *member
	point   *joinPoint
	faction int32
	granted uint64
	cmds    []snapshot.MapCommands
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

// session owns the simulation, the roster and the join point. Only run
// touches them.
type session struct {
	cfg   Config
	stats *stats
	clock *lockstep.Clock

	preparing    atomic.Bool // a join point is being built in the background
	lastPrepared time.Time
	holding      bool                     // time is held for a laggard (LagWait)
	holdSince    time.Time                // when the current hold began
	tokens       map[string]*rejoin       // session token -> who it rejoins as
	conducts     map[int32]*conduct       // per player ID, across rejoins
	lastLagCheck time.Time                // when applyLagPolicy last ran
	live         atomic.Value             // liveInfo, for status replies
	overview     atomic.Pointer[Overview] // the latest picture for status pages
	history      *history                 // recent joins, desyncs and saves
	started      time.Time
	lastOverview time.Time
	rate         tickRate
	mapChecks    map[int32]mapCheck // the last hash comparison of each map
	keepaliveSeq uint32
	lastAlive    time.Time // when the last keepalive went out
	lastRTTShown time.Time // when latencies were last broadcast
	saveBusy     atomic.Bool
	saving       sync.WaitGroup
	saveState    saveState
	lastAutosave time.Time
	auth         *lockstep.Authority
	roster       *roster.Roster
	members      map[int32]*member
	order        []int32 // member IDs in admission order, for stable broadcast
	point        *joinPoint
	checkpointer *lockstep.Checkpointer // hashes clones off this goroutine, reusing unchanged maps' hashes
	cps          chan lockstep.Checkpoint
	stopping     chan struct{}      // closed when the session starts to shut down
	pending      []hashReq          // reports for a checkpoint still being hashed
	ring         *lockstep.HashRing // checkpoints of the last HashWindow ticks
	recent       []lockstep.Command // commands of the last HashWindow ticks from recentHead on, for desync reports
	recentHead   int                // where the live part of recent starts; before it, commands past the window
	partNames    []string           // the simulation's map part names, if it has parts
	reports      sync.WaitGroup     // desync reports being written

	joins   chan joinReq
	readies chan readyReq
	latency chan latencyReq
	leaves  chan leaveReq
	cmds    chan lockstep.Command
	hashes  chan hashReq
	calls   chan func() // work for the session goroutine (chat, the operator's say)
	done    chan struct{}
}

func newSession(cfg Config, sim lockstep.Sim) *session {
	var parts []string
	if dg, ok := sim.(lockstep.MapDigester); ok {
		parts = dg.MapPartNames()
	}
	return &session{
		cps:       make(chan lockstep.Checkpoint, 4),
		stopping:  make(chan struct{}),
		ring:      lockstep.NewHashRing(cfg.HashWindow),
		partNames: parts,
		hashes:    make(chan hashReq, 64),
		cfg:       cfg,
		stats:     &stats{},
		history:   &history{obs: cfg.Observer},
		mapChecks: make(map[int32]mapCheck),
		auth:      lockstep.NewAuthority(sim),
		roster:    roster.New(roster.Config{MaxPlayers: cfg.MaxPlayers, MaxSpectators: cfg.MaxSpectators, Factions: cfg.Factions}),
		members:   make(map[int32]*member),
		joins:     make(chan joinReq),
		readies:   make(chan readyReq, 64),
		latency:   make(chan latencyReq, 64),
		leaves:    make(chan leaveReq, 64),
		cmds:      make(chan lockstep.Command, 4096),
		calls:     make(chan func(), 64),
		done:      make(chan struct{}),
	}
}

// run is the session goroutine: the tick and everything that touches the
// simulation or the roster.
func (s *session) run(ctx context.Context) {
	defer close(s.done)
	s.checkpointer = lockstep.NewCheckpointer(true, runtime.GOMAXPROCS(0), func(cp lockstep.Checkpoint) {
		select {
		case s.cps <- cp:
		case <-s.stopping:
		}
	})
	s.started = time.Now()
	// The first keepalive goes one interval after the start, as every later
	// one does: nobody is there to hear one sent at once.
	s.lastAlive, s.lastRTTShown = s.started, s.started
	s.clock = lockstep.NewClock(s.cfg.TickRate, s.started)
	s.publishOverview(s.started)
	ticker := time.NewTicker(s.clock.Interval())
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			close(s.stopping)
			s.checkpointer.Close()
			for _, id := range s.order {
				s.members[id].conn.close(wire.ReasonServerClosing, "")
			}
			s.startSave(true) // the final save, written before Serve returns
			s.reports.Wait()
			return
		case now := <-ticker.C:
			s.tick(now)
		case r := <-s.joins:
			r.reply <- s.admit(r)
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
		case cp := <-s.cps:
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
	if s.point != nil && time.Since(s.point.cutAt) > s.cfg.JoinPointMaxAge {
		// Nobody may reuse it any more, so the commands kept for it can go.
		s.point = nil
		s.auth.Queues().Reset()
	}
	s.prepareJoinPoint(now)
	s.liveness(now)
	defer s.publishLive()
	defer s.publishOverview(now)
	if sc := s.cfg.Save; sc.Path != "" && sc.Every > 0 {
		if s.lastAutosave.IsZero() {
			s.lastAutosave = now
		} else if now.Sub(s.lastAutosave) >= sc.Every {
			s.lastAutosave = now
			s.startSave(false)
		}
	}
	due := s.clock.Due(now, s.auth.Speed(), max(1, s.cfg.TickRate*lockstep.MaxSpeed/2))
	due = s.applyLagPolicy(due)
	if due == 0 {
		if s.auth.Pending() > 0 {
			s.publish(s.auth.Advance(false)) // paused: commands still run
		}
		return
	}
	for i := 0; i < due; i++ {
		s.publish(s.auth.Advance(true))
		if s.auth.Speed() == 0 { // a speed command applies from the next tick
			break
		}
	}
}

// publishLive stores the players and tick that status replies report.
func (s *session) publishLive() {
	players, _ := s.roster.Count()
	s.live.Store(liveInfo{players: int32(players), tick: s.auth.Sim().Tick()})
}

// liveness sends the keepalive, drops members heard from too long ago, and
// broadcasts round trips that changed noticeably.
func (s *session) liveness(now time.Time) {
	if now.Sub(s.lastAlive) < s.cfg.KeepaliveEvery {
		return
	}
	s.lastAlive = now
	s.checkResyncs(now)
	s.keepaliveSeq++
	s.broadcastPacket(&wire.ServerKeepalive{Seq: s.keepaliveSeq, HostTime: now.UnixMicro()})
	for tok, rj := range s.tokens {
		if !rj.online && now.Sub(rj.left) > s.cfg.RejoinGrace {
			delete(s.tokens, tok) // past the grace period
		}
	}
	for _, id := range s.order {
		m := s.members[id]
		if silent := now.Sub(time.Unix(0, m.heard.Load())); silent > s.cfg.Timeout {
			s.cfg.Logger.Info("client silent; dropping it", "player", id, "name", m.name, "silent", silent.Round(time.Millisecond))
			m.conn.close(wire.ReasonTimeout, "timed out")
		}
	}
	if now.Sub(s.lastRTTShown) < 5*s.cfg.KeepaliveEvery {
		return
	}
	s.lastRTTShown = now
	var changed []wire.PlayerInfo
	for _, id := range s.order {
		m := s.members[id]
		rtt := m.rtt.Load()
		if rtt == 0 || abs(rtt-m.shownRTT)*10 < max(m.shownRTT, 1000) { // under 10% (or 0.1 ms) of change
			continue
		}
		m.shownRTT = rtt
		if p := s.roster.Get(id); p == nil || p.LatencyMs == int32(rtt/1000) {
			continue // the list shows milliseconds: nothing visible changed
		}
		if s.roster.SetLatency(id, int32(rtt/1000)) == nil {
			changed = append(changed, playerInfo(s.roster.Get(id)))
		}
	}
	if len(changed) > 0 {
		s.broadcastPacket(&wire.ServerPlayerList{Action: wire.PlayerListLatencies, Players: changed})
	}
}

func abs(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}

// applyLagPolicy looks at how far the slowest playing client is behind.
// Under LagWait it halves the ticks owed past MaxLag/2, steps no further
// than MaxLag+1 ahead of the slowest player even with a backlog owed, and
// holds time past MaxLag, telling everyone whom the session waits for;
// under LagDrop it
// disconnects whoever is past MaxLag. Joiners still catching up and
// spectators never count.
func (s *session) applyLagPolicy(due int) int {
	now := s.auth.Sim().Tick()
	var worst *member
	var behind uint64
	anyone := false // a playing member whose lag counts
	for _, id := range s.order {
		m := s.members[id]
		if !m.playing {
			continue
		}
		b := uint64(0)
		if a := m.acked.Load(); a < now {
			b = now - a
		}
		if s.cfg.LagPolicy == LagDrop && b > s.cfg.MaxLag {
			s.cfg.Logger.Info("dropping a lagging player", "player", id, "name", m.name, "behind", b)
			m.conn.close(wire.ReasonLagging, fmt.Sprintf("%d ticks behind", b))
			m.playing = false // it holds nobody, and is not dropped again, while it leaves
			continue
		}
		anyone = true
		if b > behind {
			worst, behind = m, b
		}
	}
	if s.cfg.LagPolicy == LagDrop {
		return due
	}
	holding := behind > s.cfg.MaxLag
	// The time held is charged to the player held for, over its rejoins:
	// dropping and rejoining does not buy a fresh MaxHold.
	nowT := time.Now()
	since := nowT.Sub(s.lastLagCheck)
	s.lastLagCheck = nowT
	if holding && s.holding && s.cfg.MaxHold > 0 && s.chargeHold(worst.conduct, nowT, since) {
		s.cfg.Logger.Info("dropping a player time was held for too long", "player", worst.id, "name", worst.name, "behind", behind,
			"held", worst.conduct.held.Round(time.Millisecond))
		worst.conn.close(wire.ReasonLagging, fmt.Sprintf("%d ticks behind for over %v", behind, s.cfg.MaxHold))
		worst.playing = false // it holds nobody while it leaves
		s.coolDown(worst.conduct, nowT, wire.ReasonLagging)
		s.holdSince = nowT
	}
	if holding != s.holding {
		s.holding = holding
		s.holdSince = time.Now()
		text := "The session is running again."
		if holding {
			text = fmt.Sprintf("Waiting for %s (%d ticks behind).", worst.name, behind)
		}
		s.cfg.Logger.Info("lag", "holding", holding, "behind", behind)
		s.broadcastPacket(&wire.ServerNotice{Kind: wire.NoticeInfo, Text: text})
	}
	switch {
	case holding:
		return 0
	case behind > s.cfg.MaxLag/2:
		due = (due + 1) / 2
	}
	if anyone {
		// A backlog of owed ticks is not stepped past the hold: the
		// slowest player ends at most MaxLag+1 behind, however late this
		// loop ran.
		due = min(due, int(s.cfg.MaxLag+1-behind))
	}
	return due
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
		s.cfg.Logger.Debug("command refused", "player", r.Cmd.Player, "map", r.Cmd.MapID, "kind", r.Cmd.Kind, "err", r.Err)
		if m := s.members[r.Cmd.Player]; m != nil {
			m.conn.sendPacket(&wire.ServerNotice{Kind: wire.NoticeInfo, Text: "Command refused: " + r.Err.Error()})
		}
	}
	if len(res.Accepted) > 0 {
		s.remember(res.Accepted, res.Granted)
		s.announce(res.Accepted)
	}
	if every := uint64(s.cfg.HashEvery); every > 0 && res.Stepped && res.Granted%every == 0 {
		s.checkpoint()
	}
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
	}
	return wire.ReasonGeneric
}

// errBadPassword is the password rule, checked after the name's form and
// before the roster's.
var errBadPassword = errors.New("wrong password")

// rejoin is what a session token gives back.
type rejoin struct {
	id        int32
	name      string
	spectator bool
	online    bool
	left      time.Time
}

// errBadToken is a rejoin with an unknown or expired token.
var errBadToken = errors.New("unknown or expired session token")

func (s *session) admit(r joinReq) joinReply {
	rejoined := false
	if r.token != nil {
		rj := s.tokens[string(r.token)]
		if rj == nil || !rj.online && time.Since(rj.left) > s.cfg.RejoinGrace {
			return joinReply{err: errBadToken}
		}
		if rj.online {
			// The old connection lingers (it has not timed out yet): it
			// goes, and the player comes back on the new one. The roster
			// rules hold for the player it replaces (its own name, its own
			// place), so only the password can refuse this rejoin: it is
			// checked before the old connection is touched.
			if !r.passwordOK {
				return joinReply{err: errBadPassword}
			}
			if m := s.members[rj.id]; m != nil {
				m.conn.close(wire.ReasonReplaced, "")
			}
			s.dropMember(rj.id)
			s.roster.Remove(rj.id, "")
			s.broadcastPacket(&wire.ServerPlayerList{Action: wire.PlayerListRemove, Players: []wire.PlayerInfo{{ID: rj.id}}})
			rj.online, rj.left = false, time.Now() // the old connection is gone: the grace runs from now
		}
		r.id, r.name, r.spectator = rj.id, rj.name, rj.spectator
		rejoined = true
	}
	// The rules in order: the name's form, then the password, then the
	// roster's (name online, room), so a refusal names the first rule
	// broken and nobody without the password learns who is online or
	// whether there is room.
	if err := roster.ValidateName(r.name); err != nil {
		return joinReply{err: err}
	}
	if !r.passwordOK {
		return joinReply{err: errBadPassword}
	}
	if c := s.conducts[r.id]; rejoined && c != nil && time.Now().Before(c.coolUntil) {
		return joinReply{err: &coolingError{why: c.coolWhy, left: time.Until(c.coolUntil)}}
	}
	if err := s.roster.Check(r.name, r.spectator); err != nil {
		return joinReply{err: err}
	}
	p, notices, err := s.roster.Admit(r.id, r.name, r.spectator)
	if err != nil {
		return joinReply{err: err}
	}
	if rejoined {
		// A token is good for one rejoin and is used up only once the
		// rejoin is admitted; the new one is issued just below, at
		// admission, before the world is sent.
		delete(s.tokens, string(r.token))
		notices = []roster.Notice{{Kind: roster.NoticeJoined, Text: r.name + " is back."}}
	}
	// The token to come back as this player after a dropped connection,
	// sent before the world so the joiner knows its lasting player ID.
	token := make([]byte, wire.TokenSize)
	if _, err := rand.Read(token); err == nil {
		if s.tokens == nil {
			s.tokens = map[string]*rejoin{}
		}
		s.tokens[string(token)] = &rejoin{id: r.id, name: p.Name, spectator: p.Spectator, online: true}
		r.conn.sendPacket(&wire.ServerSession{Token: token, GraceMs: s.cfg.RejoinGrace.Milliseconds(), PlayerID: r.id,
			HashEvery: uint32(s.cfg.HashEvery)})
	}
	// Everyone else gets the newcomer as a delta; the newcomer the list.
	s.broadcastPacket(s.playerDelta(wire.PlayerListAdd, r.id))
	s.sweepConducts(time.Now())
	m := &member{id: r.id, name: r.name, conn: r.conn, spectator: r.spectator, since: time.Now(), conduct: s.conductOf(r.id)}
	m.conduct.last = time.Now()
	m.heard.Store(time.Now().UnixNano())
	s.members[r.id] = m
	s.order = append(s.order, r.id)
	r.conn.sendPacket(s.playerList())
	for _, n := range notices {
		s.broadcastPacket(&wire.ServerNotice{Kind: wire.NoticeKind(n.Kind), Text: n.Text})
	}

	if s.point == nil {
		if err := s.cutJoinPoint(); err != nil {
			s.cfg.Logger.Error("cut join point", "err", err)
			s.leave(leaveReq{id: r.id, why: "the host could not prepare the world"})
			return joinReply{err: fmt.Errorf("cut join point: %w", err)}
		}
	}
	return joinReply{id: r.id, member: m, point: s.point, faction: p.Faction, granted: s.auth.Sim().Tick(),
		cmds: s.queuedCommands()}
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
	st := roster.Playing
	if p.Spectator {
		st = roster.Spectating
	}
	_ = s.roster.SetStatus(r.id, st)
	if m := s.members[r.id]; m != nil {
		m.acked.Store(r.tick)
		m.playing = !p.Spectator
	}
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
	for _, rj := range s.tokens {
		if rj.id == r.id && rj.online {
			rj.online, rj.left = false, time.Now()
		}
	}
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
