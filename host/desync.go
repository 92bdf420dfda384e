package host

import (
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/lockhost/lockhost/desync"
	"github.com/lockhost/lockhost/lockstep"
	"github.com/lockhost/lockhost/snapshot"
	"github.com/lockhost/lockhost/wire"
)

// Desync detection and repair. Every HashEvery ticks the session takes a
// checkpoint of its own state hashes (kept for HashWindow ticks); each
// playing client reports its hashes for the same ticks. A report that
// differs marks the player Desynced, tells everyone, writes a report file
// and starts a repair: the session cuts the differing maps (or the whole
// world) as they are now, sends Server_Resync on the ordered stream, and
// streams the cut as a world payload built off the session goroutine.
// The client swaps it in at exactly the cut's point and catches up; its
// next matching report ends the repair. Other players are never paused:
// while repaired, the player does not count for the lag policy.

// hashReq is a client's hash report, checked for shape by its reader.
type hashReq struct {
	id       int32
	conn     *conn
	r        *wire.ClientHashes
	resynced *wire.ClientResynced // instead of r: a repair went in
}

// resyncState is a repair under way for one member.
type resyncState struct {
	cut        uint64        // the tick the repair state was cut at
	world      atomic.Uint64 // the host's world hash at the cut, once worldKnown
	worldKnown atomic.Bool   // set off the session goroutine, before the payload goes out
	checkTick  uint64        // the checkpoint whose hashes differed
	detected   time.Time
	maps       []int32
	full       bool
}

// anyReady tells whether a member is past WorldReady: only such a member
// reports hashes, so while there is none (an empty session, or everyone
// still downloading) the host takes no checkpoints. A big world's
// checkpoint hashes most of it, and on a host that shares its cores with
// the machine's other work, hashing for nobody slowed the joins it
// waited on. A member's first report may then fall on a tick from before
// it was ready, which has no checkpoint: it is counted as unchecked, and
// its next one is compared.
func (s *session) anyReady() bool {
	for _, m := range s.members {
		if m.ready {
			return true
		}
	}
	return false
}

// uncheckedReport counts a hash report the host has no checkpoint to
// compare with (Stats.HashReportsUnchecked).
func (s *session) uncheckedReport() {
	s.stats.update(func(st *Stats) { st.HashReportsUnchecked++ })
}

// checkpoint takes the host's hashes of the current state, which is right
// after a Step: the point every client hashes at. A simulation that can
// clone itself is only cloned here and hashed on another goroutine, so a
// big world's hashing does not stall the tick.
func (s *session) checkpoint() {
	start := time.Now()
	cp, ok := s.desync.checkpointer.Take(s.auth.Sim())
	d := time.Since(start)
	skipped := int(s.desync.checkpointer.Skipped())
	s.stats.update(func(st *Stats) {
		st.Checkpoints++
		st.LastHash = d
		st.HashTime += d
		st.CheckpointsSkipped = skipped
	})
	if ok {
		s.addCheckpoint(cp)
	}
	if s.anyReady() { // a recorded session takes checkpoints for nobody
		s.desync.keepCheckpoint(s.auth.Sim(), s.cfg.Desync.HashEvery)
	}
}

// addCheckpoint records a checkpoint and compares the reports that were
// waiting for it.
func (s *session) addCheckpoint(cp lockstep.Checkpoint) {
	s.recordCheckpoint(cp)
	for _, r := range s.desync.add(cp) {
		s.checkHashes(r)
	}
}

// checkHashes compares a client's report with the host's checkpoint. A
// connection the host is closing (dropped for its desyncs, say) has its
// later reports ignored: they would count its drop again.
func (s *session) checkHashes(r hashReq) {
	m := s.members[r.id]
	if m == nil || m.conn != r.conn || m.conn.isClosing() || s.mode.report(m, r) {
		return
	}
	if r.resynced != nil {
		// A repair's confirmation checks the state as a report does.
		m.hashedTick = max(m.hashedTick, r.resynced.Tick)
		s.resynced(m, r.resynced)
		return
	}
	rep := r.r
	m.hashedTick = max(m.hashedTick, rep.Tick)
	if now := s.auth.Sim().Tick(); rep.Tick > now {
		m.conn.close(wire.ReasonBadPacket, fmt.Sprintf("hashes for tick %d, ahead of the host's tick %d", rep.Tick, now))
		return
	}
	if rep.Tick < s.desync.ring.Oldest() {
		if s.desync.ring.Newest()-rep.Tick <= s.cfg.Desync.HashWindow { // rep.Tick < Oldest <= Newest
			// Inside the window, but the host took no checkpoint then:
			// nobody was ready yet (anyReady).
			s.uncheckedReport()
			return
		}
		if now := time.Now(); now.Sub(m.lastHashRefusal) >= time.Second {
			m.lastHashRefusal = now
			m.conn.sendPacket(&wire.ServerNotice{Kind: wire.NoticeInfo,
				Text: fmt.Sprintf("Hash report for tick %d refused: older than the host keeps (tick %d).", rep.Tick, s.desync.ring.Oldest())})
		}
		return
	}
	if rep.Tick > s.desync.ring.Newest() {
		// The host's own checkpoint is still being hashed.
		if !s.desync.wait(r) {
			s.uncheckedReport()
			s.cfg.Logger.Debug("too many hash reports waiting; one not compared", "player", m.id, "name", m.name, "tick", rep.Tick)
		}
		return
	}
	cp := s.desync.ring.Get(rep.Tick)
	if cp == nil {
		s.uncheckedReport()
		s.cfg.Logger.Debug("no checkpoint for a hash report", "player", m.id, "name", m.name, "tick", rep.Tick)
		return
	}
	s.stats.update(func(st *Stats) { st.HashReports++ })
	var differ []int32
	for _, rm := range rep.Maps {
		hm := cp.Map(rm.MapID)
		if hm == nil {
			m.conn.close(wire.ReasonBadPacket, fmt.Sprintf("hashes for map %d, which does not exist", rm.MapID))
			return
		}
		if hm.Hash != rm.Hash {
			differ = append(differ, rm.MapID)
		}
	}
	if rep.Tick <= m.lastCut {
		return // taken before the last repair went in
	}
	worldDiffers := rep.World != cp.World
	m.lastCheck = rep.Tick
	s.desync.noteChecks(rep, differ)
	if len(differ) == 0 && !worldDiffers {
		m.good, m.checked = heldCheck{tick: rep.Tick, world: rep.World}, true
		if m.resync != nil {
			s.repaired(m)
		}
		return
	}
	m.resync = nil // different (again, after a repair): a new desync
	s.desynced(m, rep, cp, differ, worldDiffers)
}

// desynced handles a report that differs: a repair, or a drop when the
// player desyncs too often.
func (s *session) desynced(m *member, rep *wire.ClientHashes, cp *lockstep.Checkpoint, differ []int32, worldDiffers bool) {
	now := time.Now()
	count := s.conducts.countDesync(m.conduct, now) // over its rejoins too
	// The world-level state alone, or every map: the whole world goes.
	full := len(differ) == 0 || len(differ) == len(cp.Maps)
	repair := "map"
	if full {
		repair = "world"
	}
	drop := count > s.cfg.Desync.Limit
	if drop {
		repair = "drop"
	}
	s.stats.update(func(st *Stats) { st.Desyncs++ })
	ref := s.referenceOf(rep.Tick)
	s.cfg.Logger.Warn("desync", "player", m.id, "name", m.name, "tick", rep.Tick, "host_tick", s.auth.Sim().Tick(),
		"maps", differ, "world_differs", worldDiffers, "repair", repair, "count", count, "reference", ref)
	report := s.report(m, rep, cp, differ, repair)
	report.Reference = ref
	if drop || !s.startExplain(m, rep.Tick, differ, report, now) {
		s.desync.writeReport(report)
	}
	ev := &wire.ServerDesync{PlayerID: m.id, Name: m.name, Tick: rep.Tick, Maps: differ, World: worldDiffers}
	rec := DesyncRecord{At: now, Player: m.id, Name: m.name, Event: DesyncDetected, Tick: rep.Tick, Maps: differ, Reference: ref}
	if drop {
		rec.Event = DesyncDropped
	}
	s.pub.history.desync(rec)
	if drop {
		ev.State = wire.DesyncDropped
		s.broadcastPacket(ev)
		s.stats.update(func(st *Stats) { st.DesyncDrops++ })
		m.conn.close(wire.ReasonDesync, fmt.Sprintf("%d desyncs within %v", count, s.cfg.Desync.Window))
		m.playing = false // it holds nobody while it leaves
		s.conducts.coolDown(m.conduct, now, wire.ReasonDesync)
		return
	}
	_ = s.roster.SetStatus(m.id, wire.StatusDesynced)
	s.broadcastPacket(s.playerDelta(wire.PlayerListStatus, m.id))
	s.broadcastPacket(ev)
	s.broadcastPacket(&wire.ServerNotice{Kind: wire.NoticeInfo, Text: desyncText(m.name, rep.Tick, differ, full, ref, s.mode.repairWaits())})
	s.startResync(m, rep.Tick, differ, full)
}

// desyncText is the notice of a desync. In a relay session it says when
// the players' majority decided (ref), and when the repair waits for an
// arbiter.
func desyncText(name string, tick uint64, maps []int32, full bool, ref string, waits bool) string {
	against, then := "the host's", "repairing it."
	if full {
		then = "sending the world again."
	}
	if strings.HasPrefix(ref, "majority") {
		against = "the other players' (" + ref + ")"
	}
	if waits {
		then = "the repair waits for an arbiter."
	}
	what := "world"
	if !full {
		ids := make([]string, len(maps))
		for i, id := range maps {
			ids[i] = fmt.Sprint(id)
		}
		what = "map " + ids[0]
		if len(ids) > 1 {
			what = "maps " + strings.Join(ids, ", ")
		}
	}
	return fmt.Sprintf("%s's %s diverged from %s at tick %d; %s", name, what, against, tick, then)
}

// startResync cuts the state to send, tells the client where it goes in,
// and builds and streams the payload off the session goroutine, through
// the pipeline join points use (snapshot.Build with the maps to repair),
// in the codec the client was sent its join in.
func (s *session) startResync(m *member, checkTick uint64, maps []int32, full bool) {
	sim := s.auth.Sim()
	tick := sim.Tick()
	rs := &resyncState{cut: tick, checkTick: checkTick, detected: time.Now(), maps: maps, full: full}
	if s.mode.repair(m, rs) {
		return
	}
	opts := snapshot.BuildOptions{Compression: s.points.compression(m.conn.codec)}
	// A simulation that can clone itself is only copied here; encoding,
	// hashing and compressing run elsewhere, map by map, so a big map
	// does not stall the tick and the repair is never held raw whole.
	var src snapshot.State
	if c, ok := sim.(lockstep.Cloner); ok {
		src = c.Clone()
		if !full {
			opts.Maps = maps
		}
	} else {
		raw, err := cutRepair(sim, maps, full)
		if err != nil {
			s.cfg.Logger.Error("cut a repair", "player", m.id, "name", m.name, "err", err)
			m.conn.close(wire.ReasonGeneric, "the host could not cut the state to repair yours")
			return
		}
		src = raw.State()
		rs.world.Store(raw.WorldHash)
		rs.worldKnown.Store(true)
	}
	// On the ordered stream before any later tick: the client stops at
	// exactly this point to swap the state in.
	m.conn.sendPacket(&wire.ServerResync{Tick: tick, Applied: s.auth.Applied(), Maps: maps, Full: full})
	m.lastCut = tick
	m.resync = rs
	m.playing = false // repaired players do not hold time for the others
	log, st, c := s.cfg.Logger, s.stats, m.conn
	id := m.id
	go func() {
		start := time.Now()
		point, err := snapshot.Build(src, opts)
		src = nil
		var pl *snapshot.Payload
		if err == nil {
			// Known before the payload goes out, so before the client
			// can answer with its own.
			rs.world.Store(point.WorldHash)
			rs.worldKnown.Store(true)
			pl, err = snapshot.NewPayload(point, 0, point.Tick, nil)
		}
		if err != nil {
			log.Error("build a repair", "player", id, "err", err)
			c.close(wire.ReasonGeneric, "the host could not build the state to repair yours")
			return
		}
		st.update(func(st *Stats) {
			if full {
				st.WorldResyncs++
			} else {
				st.MapResyncs++
			}
			st.ResyncBytes += pl.Total()
			st.LastResyncBytes = pl.Total()
		})
		log.Info("sending repair", "player", id, "tick", point.Tick, "maps", maps, "full", full,
			"compression", opts.Compression.String(), "bytes", pl.Total(), "raw_bytes", point.RawSize(),
			"build_ms", float64(time.Since(start).Microseconds())/1000)
		c.startTransfer(newRepairTransfer(pl))
	}()
}

// cutRepair copies what a repair sends, for a simulation that cannot
// clone itself: the whole state, or the world-level state and the given
// maps.
func cutRepair(sim lockstep.Sim, maps []int32, full bool) (*snapshot.Raw, error) {
	if full {
		return snapshot.Cut(sim)
	}
	return snapshot.CutMaps(sim, maps)
}

// resynced checks the world hash a client reports right after a repair
// went in against the host's at the cut: equal ends the repair; different
// means more than the repaired maps differs, and the whole world goes.
func (s *session) resynced(m *member, r *wire.ClientResynced) {
	rs := m.resync
	if rs == nil || r.Tick != rs.cut || !rs.worldKnown.Load() {
		m.conn.close(wire.ReasonBadPacket, fmt.Sprintf("a repair reported at tick %d, but none is under way there", r.Tick))
		return
	}
	if r.World == rs.world.Load() {
		s.repaired(m)
		return
	}
	m.resync = nil
	rep := &wire.ClientHashes{Tick: r.Tick, World: r.World}
	s.desynced(m, rep, &lockstep.Checkpoint{Tick: rs.cut, World: rs.world.Load()}, nil, true)
}

// repaired ends a repair: the player's hashes match again.
func (s *session) repaired(m *member) {
	rs := m.resync
	m.resync = nil
	d := time.Since(rs.detected)
	st := wire.StatusPlaying
	if m.spectator {
		st = wire.StatusSpectating
	}
	_ = s.roster.SetStatus(m.id, st)
	m.playing = !m.spectator
	s.stats.update(func(st *Stats) { st.Repaired++; st.LastRepair = d })
	s.cfg.Logger.Info("desync repaired", "player", m.id, "name", m.name, "tick", rs.checkTick, "maps", rs.maps,
		"full", rs.full, "repair_ms", d.Milliseconds())
	s.broadcastPacket(s.playerDelta(wire.PlayerListStatus, m.id))
	s.pub.history.desync(DesyncRecord{At: time.Now(), Player: m.id, Name: m.name, Event: DesyncRepaired, Tick: rs.checkTick,
		Maps: rs.maps, Repair: d})
	s.broadcastPacket(&wire.ServerDesync{State: wire.DesyncRepaired, PlayerID: m.id, Name: m.name, Tick: rs.checkTick,
		Maps: rs.maps, World: rs.full, RepairMs: d.Milliseconds()})
	s.broadcastPacket(&wire.ServerNotice{Kind: wire.NoticeInfo,
		Text: fmt.Sprintf("%s is in sync again (repaired in %d ms).", m.name, d.Milliseconds())})
}

// checkResyncs drops players whose repair has taken too long.
func (s *session) checkResyncs(now time.Time) {
	for _, id := range s.order {
		m := s.members[id]
		if m.resync != nil && now.Sub(m.resync.detected) > s.cfg.Desync.ResyncTimeout {
			s.cfg.Logger.Info("repair timed out; dropping the player", "player", id, "name", m.name, "after", now.Sub(m.resync.detected).Round(time.Millisecond))
			s.stats.update(func(st *Stats) { st.DesyncDrops++ })
			s.pub.history.desync(DesyncRecord{At: now, Player: id, Name: m.name, Event: DesyncDropped, Tick: m.resync.checkTick, Maps: m.resync.maps})
			m.conn.close(wire.ReasonDesync, fmt.Sprintf("not repaired within %v", s.cfg.Desync.ResyncTimeout))
			s.conducts.coolDown(m.conduct, now, wire.ReasonDesync)
			m.resync = nil // dropped once: the next pass must not count it again while it leaves
		}
	}
}

// report describes a desync for the report file.
func (s *session) report(m *member, rep *wire.ClientHashes, cp *lockstep.Checkpoint, differ []int32, repair string) *desync.Report {
	r := &desync.Report{
		Version: 1, Time: time.Now(), Game: s.cfg.GameName, PlayerID: m.id, Player: m.name,
		Tick: rep.Tick, HostTick: s.auth.Sim().Tick(), Scope: "map", MapIDs: differ,
		WorldHost: cp.World, WorldClient: rep.World, Repair: repair, Count: len(m.conduct.desyncs),
	}
	if len(differ) == 0 {
		r.Scope = "world"
	}
	for _, rm := range rep.Maps {
		hm := cp.Map(rm.MapID)
		mc := desync.MapCheck{ID: rm.MapID, Host: hm.Hash, Client: rm.Hash, Match: hm.Hash == rm.Hash}
		if !mc.Match && len(hm.Parts) == len(rm.Parts) && len(hm.Parts) == len(s.desync.partNames) {
			for i, name := range s.desync.partNames {
				mc.Parts = append(mc.Parts, desync.PartCheck{Name: name, Host: hm.Parts[i], Client: rm.Parts[i], Match: hm.Parts[i] == rm.Parts[i]})
			}
		}
		r.Maps = append(r.Maps, mc)
	}
	if rep.Tick > s.cfg.Desync.HashWindow {
		r.CommandsFrom = rep.Tick - s.cfg.Desync.HashWindow
	}
	live := s.desync.liveRecent()
	r.Commands = desync.Records(live[firstAt(live, r.CommandsFrom):])
	return r
}
