package host

import (
	"cmp"
	"fmt"
	"maps"
	"slices"

	"github.com/lockhost/lockhost/desync"
	"github.com/lockhost/lockhost/internal/addrkey"
	"github.com/lockhost/lockhost/lockstep"
	"github.com/lockhost/lockhost/wire"
)

// A relay session without an arbiter (docs/protocol.md, section 14.6.1):
// the active arbiter's reports are the reference checkpoints while there
// is one (relayReference); while there is none the players' reports of
// each checkpoint tick are gathered in a ballot, and the hashes a strict
// majority of them reported, at least two, become the checkpoint the
// usual comparison (checkHashes) holds everyone to. A checkpoint without
// such a majority sets no reference: nobody is found desynced at it, and
// the host logs it with the counts.
//
// Players the host cannot tell apart do not make a majority on their
// own: the reports from one network (an IPv4 /24, an IPv6 /64:
// addrkey.Prefix) are one vote, and none when they differ. A player
// whose repair waits for an arbiter keeps its vote: it is not compared
// meanwhile, but those who found it desynced do not decide alone.

// relayVotes is the ballots of a relay session, owned by the session
// goroutine.
type relayVotes struct {
	open    []*ballot         // checkpoint ticks still gathering reports, oldest first
	waiting []int32           // members whose repair waits for an arbiter, in detection order
	decided uint64            // the newest checkpoint tick decided, with a majority or without
	refs    map[uint64]string // how the majority checkpoints of the hash window were decided
}

// ballot is the reports of one checkpoint tick.
type ballot struct {
	tick    uint64
	reports []hashReq
	voters  []bool   // per report: a player's, which counts (a spectator's does not)
	nets    []string // per report: the reporter's network (addrkey.Prefix), whose reports are one vote
}

// has reports whether member id's report is in b.
func (b *ballot) has(id int32) bool {
	return slices.ContainsFunc(b.reports, func(r hashReq) bool { return r.id == id })
}

// relayVote takes a hash report while the relay session has no active
// arbiter, into its checkpoint's ballot, and reports whether it took it.
// A report it leaves goes the usual way: one the usual checks refuse (a
// tick ahead of the host's, or older than the window), or one of a
// checkpoint the majority decided, which is compared with that
// reference. Session goroutine.
func (s *session) relayVote(m *member, r hashReq) bool {
	rs := s.relay
	if rs.active != 0 {
		s.relayDecide() // an arbiter has become active: what waited for one goes on, before any comparison
		return false
	}
	if r.r == nil || !rs.world.HasWorld() {
		return false
	}
	rep := r.r
	every := uint64(max(0, s.cfg.Desync.HashEvery))
	if rep.Tick > s.auth.Sim().Tick() || rep.Tick < s.desync.ring.Oldest() || every == 0 {
		return false
	}
	v := &s.relay.votes
	v.decided = max(v.decided, s.desync.ring.Newest())
	if rep.Tick <= v.decided {
		if s.desync.ring.Get(rep.Tick) != nil {
			return false // decided by a majority, or by an arbiter before: compared with it
		}
		m.hashedTick = max(m.hashedTick, rep.Tick)
		s.cfg.Logger.Debug("hash report for a checkpoint without a reference; not compared", "player", m.id, "name", m.name, "tick", rep.Tick)
		return true
	}
	m.hashedTick = max(m.hashedTick, rep.Tick)
	if rep.Tick%every != 0 {
		return true // not a checkpoint tick
	}
	b := v.ballot(rep.Tick)
	if b.has(m.id) {
		return true
	}
	b.reports = append(b.reports, r)
	b.voters = append(b.voters, s.isVoter(m))
	b.nets = append(b.nets, addrkey.Prefix(remoteIP(m.conn.nc)))
	s.relayDecide()
	return true
}

// isVoter reports whether m's reports are votes: a player's, not a
// spectator's, that plays or whose repair waits for an arbiter (it
// keeps its vote while it waits). Session goroutine.
func (s *session) isVoter(m *member) bool {
	return !m.spectator && (m.playing || m.resync != nil && slices.Contains(s.relay.votes.waiting, m.id))
}

// ballot returns the open ballot of tick, opened if need be.
func (v *relayVotes) ballot(tick uint64) *ballot {
	i, found := slices.BinarySearchFunc(v.open, tick, func(b *ballot, t uint64) int { return cmp.Compare(b.tick, t) })
	if !found {
		v.open = slices.Insert(v.open, i, &ballot{tick: tick})
	}
	return v.open[i]
}

// relayDecide decides the open ballots, oldest first, that every voter
// has reported or whose wait has passed: the host's tick is past the
// checkpoint by two hash intervals plus the lag a player may have, the
// slack after which a player silent that long is shown unverified. When
// an arbiter has become active the repairs that waited for one start,
// and the ballots are given up and their reports compared with the
// arbiter's; when it has left, the reports that waited for its
// checkpoints become votes. It runs after each report taken and each
// tick stepped. Session goroutine.
func (s *session) relayDecide() {
	v := &s.relay.votes
	if s.relay.active != 0 {
		waiting := v.waiting
		v.waiting = nil
		for _, id := range waiting {
			s.relayRepairGoes(id)
		}
		open := v.open
		v.open = nil
		for _, b := range open {
			for _, r := range b.reports {
				s.checkHashes(r) // now the arbiter's reports are the reference
			}
		}
		return
	}
	if s.cfg.Desync.HashEvery <= 0 {
		return // no checkpoints
	}
	if len(s.desync.pending) > 0 {
		// Reports that waited for the arbiter's report of their tick when
		// it left: they are votes now.
		pending := s.desync.pending
		s.desync.pending = nil
		for _, r := range pending {
			s.checkHashes(r)
		}
	}
	now := s.auth.Sim().Tick()
	wait := unverifiedAfter(unverifiedIntervals, s.cfg.Desync.HashEvery, s.cfg.Lag.MaxLag)
	for len(v.open) > 0 {
		b := v.open[0]
		if (b.tick > now || now-b.tick < wait) && !s.allVoted(b) { // no tick + wait: it could overflow
			return
		}
		v.open = v.open[1:]
		s.decideBallot(b)
	}
}

// allVoted reports whether every player that could report b's tick has:
// a voter (isVoter) ready before the tick.
func (s *session) allVoted(b *ballot) bool {
	for _, id := range s.order {
		m := s.members[id]
		if s.isVoter(m) && m.readyTick < b.tick && !b.has(id) {
			return false
		}
	}
	return true
}

// decideBallot sets the reference checkpoint of b's tick from the hashes
// a strict majority of its votes (one per network: networkVotes) gave,
// at least two of them, and compares every report of b with it but
// those of players whose repair waits for an arbiter; without such a
// majority it sets none and logs the counts.
func (s *session) decideBallot(b *ballot) {
	v := &s.relay.votes
	v.decided = max(v.decided, b.tick)
	votes, split := b.networkVotes()
	ref, k, sizes := majorityOf(votes)
	n := len(votes)
	if ref == nil {
		if n > 1 || split > 0 {
			s.cfg.Logger.Warn("checkpoint without a majority: no reference, nobody compared", "tick", b.tick,
				"host_tick", s.auth.Sim().Tick(), "reporters", n, "largest", k, "hashes", fmt.Sprint(sizes), "split_networks", split)
			s.stats.update(func(st *Stats) { st.NoMajority++ })
		} else {
			s.cfg.Logger.Debug("checkpoint with one reporter: no reference", "tick", b.tick, "reporters", n)
		}
		return
	}
	name := desync.ReferenceMajority(k, n)
	if v.refs == nil {
		v.refs = map[uint64]string{}
	}
	v.refs[b.tick] = name
	maps.DeleteFunc(v.refs, func(t uint64, _ string) bool { return t < s.desync.ring.Oldest() })
	s.cfg.Logger.Info("checkpoint decided by the players", "tick", b.tick, "host_tick", s.auth.Sim().Tick(), "reference", name,
		"hashes", fmt.Sprint(sizes))
	s.stats.update(func(st *Stats) { st.MajorityCheckpoints++ })
	s.addCheckpoint(reportCheckpoint(ref))
	for _, r := range b.reports {
		if m := s.members[r.id]; m != nil && m.resync != nil {
			continue // its repair waits for an arbiter: it voted, and is not compared meanwhile
		}
		s.checkHashes(r)
	}
}

// networkVotes is b's votes, one per network: the voters' reports from
// one network are its vote when they all agree (sameHashes); a network
// whose voters differ casts none, and split counts those networks.
func (b *ballot) networkVotes() (votes []*wire.ClientHashes, split int) {
	var nets []string
	for i, r := range b.reports {
		if !b.voters[i] {
			continue
		}
		j := slices.Index(nets, b.nets[i])
		switch {
		case j < 0:
			nets = append(nets, b.nets[i])
			votes = append(votes, r.r)
		case votes[j] != nil && !sameHashes(votes[j], r.r):
			votes[j] = nil
			split++
		}
	}
	return slices.DeleteFunc(votes, func(h *wire.ClientHashes) bool { return h == nil }), split
}

// majorityOf groups votes by equal hashes (sameHashes) and returns one
// report of the largest group when that group is a strict majority of at
// least two (k >= 2, 2k > len(votes)), else nil; k is the largest group's
// size and sizes every group's, largest first.
func majorityOf(votes []*wire.ClientHashes) (ref *wire.ClientHashes, k int, sizes []int) {
	var groups [][]*wire.ClientHashes
	for _, r := range votes {
		j := slices.IndexFunc(groups, func(g []*wire.ClientHashes) bool { return sameHashes(g[0], r) })
		if j < 0 {
			groups = append(groups, nil)
			j = len(groups) - 1
		}
		groups[j] = append(groups[j], r)
	}
	best := -1
	for i, g := range groups {
		sizes = append(sizes, len(g))
		if len(g) > k {
			k, best = len(g), i
		}
	}
	slices.SortFunc(sizes, func(a, b int) int { return b - a })
	if k < 2 || 2*k <= len(votes) {
		return nil, k, sizes
	}
	return groups[best][0], k, sizes
}

// sameHashes reports whether two reports hold the same world hash and
// the same maps with the same hashes.
func sameHashes(a, b *wire.ClientHashes) bool {
	if a.World != b.World || len(a.Maps) != len(b.Maps) {
		return false
	}
	hashes := make(map[int32]uint64, len(a.Maps))
	for _, m := range a.Maps {
		hashes[m.MapID] = m.Hash
	}
	for _, m := range b.Maps {
		if h, ok := hashes[m.MapID]; !ok || h != m.Hash {
			return false
		}
	}
	return true
}

// reportCheckpoint is a client's report as a checkpoint, maps by ID.
func reportCheckpoint(rep *wire.ClientHashes) lockstep.Checkpoint {
	cp := lockstep.Checkpoint{Tick: rep.Tick, World: rep.World, Maps: make([]lockstep.MapCheckpoint, len(rep.Maps))}
	for i, mh := range rep.Maps {
		cp.Maps[i] = lockstep.MapCheckpoint{ID: mh.MapID, Hash: mh.Hash, Parts: mh.Parts}
	}
	slices.SortFunc(cp.Maps, func(a, b lockstep.MapCheckpoint) int { return cmp.Compare(a.ID, b.ID) })
	return cp
}

// referenceOf says whose hashes a report of tick was compared with, for
// the desync report: the host's own, a relay session's arbiter's, or the
// majority of players that decided the checkpoint.
func (s *session) referenceOf(tick uint64) string {
	if s.relay == nil {
		return desync.ReferenceHost
	}
	if ref, ok := s.relay.votes.refs[tick]; ok {
		return ref
	}
	return desync.ReferenceArbiter
}

// relayRepairWaits holds the repair of m while the relay session has no
// active arbiter, and reports whether it did. The repair's cut is not
// made yet: an arbiter that becomes active later has simulated past any
// cut made now (it caught up before it said WorldReady) and could not
// upload the state there. So m keeps playing, its reports are not
// compared, and the cut is made when an arbiter is active
// (relayRepairGoes); the repair deadline counts from the detection.
func (s *session) relayRepairWaits(m *member, rs *resyncState) bool {
	if s.relay.active != 0 {
		return false
	}
	m.resync = rs
	m.playing = false // as during any repair: it holds time for nobody
	// Listed once, also for a member that rejoined while listed.
	if !slices.Contains(s.relay.votes.waiting, m.id) {
		s.relay.votes.waiting = append(s.relay.votes.waiting, m.id)
	}
	s.cfg.Logger.Info("repair waits for an arbiter", "player", m.id, "name", m.name, "tick", rs.checkTick, "maps", rs.maps, "full", rs.full)
	return true
}

// relayRepairGoes starts the repair of member id that waited for an
// arbiter, cut now, unless the member left or its repair ended
// meanwhile (dropped at the repair deadline).
func (s *session) relayRepairGoes(id int32) {
	m := s.members[id]
	if m == nil || m.resync == nil {
		return
	}
	m.resync.cut = s.auth.Sim().Tick()
	s.relayResync(m, m.resync)
}
