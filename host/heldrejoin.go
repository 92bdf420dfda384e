package host

import (
	"time"

	"github.com/lockhost/lockhost/lockstep"
	"github.com/lockhost/lockhost/snapshot"
	"github.com/lockhost/lockhost/wire"
)

// A held-world rejoin (docs/protocol.md, section 6.6): a player that was
// past WorldReady and still holds its simulation rejoins with its token
// and says where its simulation stands and which hash reports it sent
// last. The host trusts that world only as far as it checked it: the
// last hash report it compared and accepted from the player (kept with
// the token when the player dropped) must be among those named, with the
// same world hash, and the player must not have been under repair. Since
// then the player applied only commands this host stamped and sent, in
// order, so if the rejoin window still holds every command after the
// position the player names, those commands bring it to the host's tick;
// any divergence since the accepted report shows in its next report and
// is repaired as usual. Otherwise the host says why in Server_Session and
// sends the world.

// heldCheck is a hash report the host compared and accepted: its tick and
// world hash.
type heldCheck struct {
	tick  uint64
	world uint64
}

// heldRecord is what the host knows of a player's world when it dropped,
// kept with its token for a held-world rejoin.
type heldRecord struct {
	good    heldCheck // the last report accepted
	checked bool      // good is set
	repair  bool      // found desynced and not repaired yet
	run     int       // held-world rejoins in a row since the player last reached WorldReady
}

// heldOf is what m's token keeps of its world when m goes.
func heldOf(m *member) heldRecord {
	return heldRecord{good: m.good, checked: m.checked, repair: m.resync != nil, run: m.heldRun}
}

// heldStalled refuses a held-world rejoin after too many in a row that
// made no progress. A held-world rejoin that never reaches WorldReady
// is a retry without progress, as a resume that gets no further is
// (resume.go): the first after the player last reached WorldReady is a
// new start, and a third in a row after one that got nowhere is refused,
// so that rejoins in a chain cannot each have the host build a replay.
func heldStalled(a *admission) error {
	if a.r.held == nil || a.rj == nil || a.rj.progress != nil {
		return nil
	}
	if a.rj.held.run > maxResumeStalls {
		return errResumeStalled
	}
	return nil
}

// heldDecision is the host's answer to a held-world rejoin: the result
// for Server_Session and, when it is wire.RejoinHeld, the replay of the
// commands the player missed (replays.go).
type heldDecision struct {
	result  wire.RejoinResult
	replay  snapshot.Blob // the replay, compressed for Server_Session
	granted uint64        // where the replay ends: the Server_Session's grant
	// tail is the commands stamped after the replay's end (a replay
	// kept from an earlier rejoin), sent as ticks after the admission.
	tail   []lockstep.Command
	record heldRecord // carried to the new member on RejoinHeld
	key    replayKey  // the replay's, when one was looked for
}

// decideHeld weighs the held world a's joiner names. It returns a zero
// decision when no held world was named, and wait when the admission
// waits for its replay to be built.
func (s *session) decideHeld(a *admission) (d heldDecision, wait bool) {
	h, rj := a.r.held, a.rj
	if h == nil || rj == nil {
		return heldDecision{}, false
	}
	tick, applied := s.auth.Sim().Tick(), s.auth.Applied()
	rec := rj.held
	switch {
	case rj.progress != nil || rj.spectator || a.r.arbiterOK:
		d.result = wire.RejoinNotPlaying
	case h.Tick > tick || h.Tick == tick && h.Applied > applied:
		d.result = wire.RejoinAhead
	case rec.repair:
		d.result = wire.RejoinRepair
	case !rec.checked:
		d.result = wire.RejoinUnchecked
	case !namesCheck(h, rec.good) || h.Tick < rec.good.tick:
		d.result = wire.RejoinHashes
	default:
		d, wait = s.replay(h, a.r.conn.codec)
	}
	d.record = rec
	return d, wait
}

// namesCheck reports whether h names the report c with its world hash.
func namesCheck(h *wire.HeldWorld, c heldCheck) bool {
	for _, hc := range h.Checks {
		if hc.Tick == c.tick && hc.World == c.world {
			return true
		}
	}
	return false
}

// replay is the commands after h's position, laid out as a replay
// (wire.AppendReplay) and compressed with codec, when the window holds
// them all and they fit the replay's limits (replays.go): kept from an
// earlier rejoin, or to wait for.
func (s *session) replay(h *wire.HeldWorld, codec snapshot.Codec) (heldDecision, bool) {
	cmds, ok := s.window.since(h.Tick, h.Applied)
	if !ok {
		return heldDecision{result: wire.RejoinWindow}, false
	}
	if h.Tick < s.auth.Sim().Tick() && h.Applied > stampedAt(s.window, h.Tick) {
		// More of a past tick's commands applied than were stamped.
		return heldDecision{result: wire.RejoinAhead}, false
	}
	return s.heldReplay(replayPos{tick: h.Tick, applied: h.Applied}, codec, cmds)
}

// stampedAt counts the commands the window holds stamped tick.
func stampedAt(w *cmdWindow, tick uint64) uint32 {
	live := w.cmds[w.head:]
	n := uint32(0)
	for i := firstAt(live, tick); i < len(live) && live[i].Tick == tick; i++ {
		n++
	}
	return n
}

// countRejoin counts an admitted rejoin of a player past WorldReady: from
// its held world, or with a download (and, for a held world turned down,
// why).
func (s *session) countRejoin(a *admission, d heldDecision) {
	if a.rj == nil || a.rj.progress != nil {
		return
	}
	s.stats.update(func(st *Stats) {
		switch {
		case d.result == wire.RejoinHeld:
			st.RejoinsHeld++
			st.RejoinReplayedBytes += uint64(len(d.replay.Data))
		default:
			st.RejoinsDownloaded++
			if d.result.Fallback() && int(d.result) < len(st.RejoinFallbacks) {
				st.RejoinFallbacks[d.result]++
			}
		}
	})
	if a.r.held == nil {
		return
	}
	h := a.r.held
	if d.result == wire.RejoinHeld {
		s.cfg.Logger.Info("rejoin from the held world", "player", a.r.id, "name", a.r.name, "tick", h.Tick, "applied", h.Applied,
			"host_tick", s.auth.Sim().Tick(), "replay_to", d.granted, "replay_bytes", len(d.replay.Data),
			"replay_raw_bytes", d.replay.RawSize, "tail_commands", len(d.tail))
		return
	}
	s.cfg.Logger.Info("held world turned down; sending the world", "player", a.r.id, "name", a.r.name, "tick", h.Tick,
		"applied", h.Applied, "host_tick", s.auth.Sim().Tick(), "reason", d.result.String())
}

// sessionPacket is the Server_Session of an admission with decision d.
func (s *session) sessionPacket(token []byte, id int32, d heldDecision) *wire.ServerSession {
	p := &wire.ServerSession{Token: token, GraceMs: s.cfg.Timeouts.RejoinGrace.Milliseconds(), PlayerID: id,
		HashEvery: uint32(s.cfg.Desync.HashEvery), Rejoin: d.result}
	switch {
	case d.result == wire.RejoinHeld:
		p.Granted, p.Replay, p.ReplayCodec = d.granted, d.replay.Data, uint8(d.replay.Codec)
	case d.result.Fallback():
		p.Why = d.result.Sentence()
	}
	return p
}

// advanceWindow lets the rejoin window go of what it no longer keeps.
func (s *session) advanceWindow(now time.Time) {
	s.window.advance(now, s.auth.Sim().Tick())
	s.replays.sweep(s.window.from)
}
