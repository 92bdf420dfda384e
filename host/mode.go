package host

import (
	"github.com/lockhost/lockhost/lockstep"
	"github.com/lockhost/lockhost/saves"
)

// mode is the kind of host a session is, at each point where the two
// kinds differ. A simulating host (simulating, below) runs the game: its
// own state is the reference every report is compared with, and its join
// points and repairs are cut from it. A relay host (relaySession,
// relay.go; docs/protocol.md, section 14) runs none: its world and
// repairs are its arbiter's uploads, its reference the arbiter's reports
// or, without an arbiter, its players' majority (relaymajority.go).
//
// The session holds one mode from New on (session.mode) and calls it
// where this interface says; the ordinary session files ask nothing else
// about which kind of host they serve. Every method runs on the session
// goroutine, except saveMeta (see there).
type mode interface {
	// defsRule is the first admission rule: a joiner's def databases that
	// the handshake kept unchecked are checked against those that stand.
	defsRule(r joinReq) error
	// arbiterRule follows the password rule: who may claim to be the
	// arbiter, and who may join before there is a world.
	arbiterRule(r joinReq) error
	// joinPoint is the join point a joiner admitted as m gets (held: the
	// blobs a resumed download already has), or uploader set when the
	// joiner uploads the world instead.
	joinPoint(r joinReq, m *member, held map[uint64]bool) (point *joinPoint, uploader bool, err error)
	// ready and gone follow a member's WorldReady and its leaving.
	ready(id int32)
	gone(id int32)

	// keepsPoint reports whether the current join point is kept however
	// old.
	keepsPoint() bool
	// due bounds the ticks the clock owes now.
	due(due int) int
	// stepped follows each tick published: the mode takes or decides its
	// checkpoint there.
	stepped(res lockstep.TickResult)

	// report takes a hash report the mode decides itself (a reference, a
	// vote) and reports whether it took it; the rest are compared with
	// the session's checkpoints.
	report(m *member, r hashReq) bool
	// repair starts the repair of m from state the mode provides and
	// reports whether it did; when it did not, the session builds the
	// repair from its own state.
	repair(m *member, rs *resyncState) bool
	// repairWaits reports whether a repair found now would wait (the
	// desync notice says so).
	repairWaits() bool

	// painter is what draws the session's maps (pictures.go), or nil
	// and why there is none.
	painter() (p MapPainter, why string)

	// saves reports whether the session has anything to save yet.
	saves() bool
	// saveMeta adds the mode's part to a save's metadata. It runs on the
	// goroutine writing the save and reads only what is safe there.
	saveMeta(meta *saves.Meta)
}

// simulating is the mode of a host that runs the game itself.
type simulating struct{ s *session }

func (simulating) defsRule(joinReq) error { return nil }

// arbiterRule refuses an arbiter proof: only a relay host has an arbiter.
func (simulating) arbiterRule(r joinReq) error {
	if r.arbiterClaim {
		return errBadArbiter
	}
	return nil
}

// joinPoint is the current join point, refreshed by the refresh rule
// unless the joiner resumes a download (a new one would make it fetch
// again every map that changed since), or a new one cut if there is none.
func (sm simulating) joinPoint(_ joinReq, _ *member, held map[uint64]bool) (*joinPoint, bool, error) {
	s := sm.s
	if held == nil {
		s.points.refresh(s.auth)
	}
	point, err := s.points.ensure(s.auth)
	return point, false, err
}

func (simulating) ready(int32)      {}
func (simulating) gone(int32)       {}
func (simulating) keepsPoint() bool { return false }
func (simulating) due(due int) int  { return due }

// stepped takes the host's own checkpoint at every HashEvery-th tick,
// while someone past WorldReady can report on it, or the session is
// recorded (its checkpoints are what a replay checks).
func (sm simulating) stepped(res lockstep.TickResult) {
	s := sm.s
	if every := uint64(s.cfg.Desync.HashEvery); every > 0 && res.Granted%every == 0 && (s.anyReady() || s.rec != nil) {
		s.checkpoint()
	}
}

func (simulating) report(*member, hashReq) bool      { return false }
func (simulating) repair(*member, *resyncState) bool { return false }
func (simulating) repairWaits() bool                 { return false }
func (simulating) saves() bool                       { return true }
func (simulating) saveMeta(*saves.Meta)              {}

// painter is the game itself, when it draws its maps.
func (sm simulating) painter() (MapPainter, string) {
	if p, ok := sm.s.auth.Sim().(MapPainter); ok {
		return p, ""
	}
	return nil, "the game does not draw its maps"
}

// The two modes.
var (
	_ mode = simulating{}
	_ mode = (*relaySession)(nil)
)
