package host

import (
	"sync"
	"time"

	"github.com/lockhost/lockhost/snapshot"
	"github.com/lockhost/lockhost/wire"
)

// Stats are counters of the host's work: join points, saves, state-hash
// checks and repairs.
type Stats struct {
	// JoinPoints is how many join points were cut; Built how many were
	// encoded and compressed (a cut nobody downloaded is never built).
	JoinPoints, Built int
	// BlobsCompressed and BlobsReused count world and map blobs
	// compressed, and map blobs reused unchanged from the previous point.
	BlobsCompressed, BlobsReused int
	// LastCut is how long the session goroutine spent freezing the last
	// join point; LastBuild how long building it took, off that goroutine.
	LastCut, LastBuild time.Duration
	// Saves counts saves written, SaveErrors failed ones; LastSave is how
	// long the last one took and LastSaveError why the last failure failed.
	Saves, SaveErrors int
	LastSave          time.Duration
	LastSaveError     string
	// Checkpoints counts the host's own state-hash checkpoints; LastHash
	// is how long the last one took on the session goroutine (a clone,
	// when the simulation can clone itself; hashing runs elsewhere),
	// HashTime all of them. CheckpointsSkipped counts those dropped
	// because hashing fell behind. HashReports counts client reports
	// compared, HashReportsUnchecked those that could not be: the host
	// has no checkpoint for their tick (hashing fell behind and skipped
	// it, or nobody was ready then to report on it), or too many were
	// waiting for one. The client's next report is compared as usual.
	Checkpoints, HashReports, CheckpointsSkipped, HashReportsUnchecked int
	LastHash, HashTime                                                 time.Duration
	// Desyncs counts reports whose hashes differed from the host's;
	// MapResyncs and WorldResyncs the repairs started (one map or more,
	// or the whole world); Repaired those that ended with matching
	// hashes; DesyncDrops the players dropped for desyncing too often or
	// not getting repaired in time.
	Desyncs, MapResyncs, WorldResyncs, Repaired, DesyncDrops int
	// MajorityCheckpoints counts a relay session's checkpoints whose
	// reference was the hashes a majority of the players reported, while
	// no arbiter was active; NoMajority those that had no majority and
	// so no reference.
	MajorityCheckpoints, NoMajority int
	// UnverifiedDrops counts players dropped for reporting no state
	// hashes (Config.Desync.DropUnverified).
	UnverifiedDrops int
	// ResyncBytes is the payload bytes of all repairs; LastResyncBytes the
	// last one's. LastRepair is the last repair's time from detection to
	// matching hashes.
	ResyncBytes, LastResyncBytes uint64
	LastRepair                   time.Duration
	// Explained counts desyncs the host explained (the first differing
	// tick worked out with the player's answer); LastExplain is the last
	// one's time from detection to the explanation stored.
	Explained   int
	LastExplain time.Duration
	// BytesSent counts bytes written to every connection; Commands the
	// commands the session accepted from players, CommandsRefused those
	// it refused.
	BytesSent                 uint64
	Commands, CommandsRefused uint64
	// RefusedRate, RefusedSpectator and RefusedInvalid split
	// CommandsRefused by reason: over the player's command rate, sent by
	// a spectator, or invalid (too large, a reserved kind, or refused by
	// the simulation).
	RefusedRate, RefusedSpectator, RefusedInvalid uint64
	// Chats counts chat lines relayed to everyone (the host's own
	// included); ChatsRefused those refused (over the chat rate).
	Chats, ChatsRefused uint64
	// Leaves counts players who left on purpose (Client_Leave); Drops
	// those whose connection ended otherwise (lost, timed out, dropped
	// by the host).
	Leaves, Drops uint64
	// Resumes counts joins retried before WorldReady that went on from
	// what the joiner held; ResumedBytes the world payload bytes they did
	// not need sent again.
	Resumes      int
	ResumedBytes uint64
	// RejoinsHeld counts players past WorldReady that rejoined from the
	// world they held: sent the commands they missed, not the world
	// (RejoinReplayedBytes the bytes of those commands).
	// RejoinsDownloaded counts those that rejoined and were sent the
	// world. RejoinFallbacks counts, by wire.RejoinResult, the held-world
	// rejoins the host turned down (each also counted in
	// RejoinsDownloaded).
	RejoinsHeld, RejoinsDownloaded int
	RejoinReplayedBytes            uint64
	RejoinFallbacks                [wire.RejoinResults]int
	// SectionJoins counts joins sent maps without the regenerable
	// sections the joiner made (docs/protocol.md, section 8.6);
	// SectionBytes the compressed bytes that spared them.
	SectionJoins int
	SectionBytes uint64
	// SlotYields counts the upload slots taken back from joins whose
	// downloads ran far below their share while others waited
	// (Config.Join.SlotShareWindow); each such download paused and went
	// on at its next turn.
	SlotYields int
	// AdminActions counts the admin actions done (kick, ban, say, save,
	// speed, ...; not the listings), whoever did them.
	AdminActions uint64
	// The defences against attacks from many addresses. Pending is the
	// connections not admitted yet, now; PendingEvicted counts those
	// closed to make room for newcomers, PendingRefused the newcomers
	// refused at once because their address was penalized for stalling
	// (package gate).
	Pending                        int
	PendingEvicted, PendingRefused uint64
	// PasswordChecks counts the passwords checked, PasswordsWrong those
	// found wrong; ArbiterChecks and ArbiterProofsWrong are the same for
	// a relay host's arbiter proofs, which spend the passwords' budget
	// (one attempt may prove both). GuessesRefused counts attempts
	// refused unchecked (over an address's rate, puzzle not solved, or
	// over the bound in all). PuzzlesIssued counts the puzzles set;
	// PuzzleBits is the difficulty a newcomer gets now (0: none)
	// (package gate).
	PasswordChecks, PasswordsWrong, GuessesRefused, PuzzlesIssued uint64
	ArbiterChecks, ArbiterProofsWrong                             uint64
	PuzzleBits                                                    int
}

// stats is Stats behind a lock, plus the last built point for reuse.
type stats struct {
	mu   sync.Mutex
	s    Stats
	last *snapshot.Point
}

func (st *stats) cut(d time.Duration) {
	st.mu.Lock()
	st.s.JoinPoints++
	st.s.LastCut = d
	st.mu.Unlock()
}

func (st *stats) built(p *snapshot.Point, d time.Duration) {
	st.mu.Lock()
	st.s.Built++
	st.s.BlobsCompressed += p.Compressed
	st.s.BlobsReused += p.Reused
	st.s.LastBuild = d
	st.last = p
	st.mu.Unlock()
}

func (st *stats) saved(d time.Duration) {
	st.mu.Lock()
	st.s.Saves++
	st.s.LastSave = d
	st.mu.Unlock()
}

func (st *stats) saveFailed(err error) {
	st.mu.Lock()
	st.s.SaveErrors++
	st.s.LastSaveError = err.Error()
	st.mu.Unlock()
}

// update changes the counters under the lock.
func (st *stats) update(fn func(s *Stats)) {
	st.mu.Lock()
	fn(&st.s)
	st.mu.Unlock()
}

func (st *stats) lastPoint() *snapshot.Point {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.last
}

func (st *stats) snapshot() Stats {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.s
}

// counters returns the host's counters as of now, for the Overview.
func (s *Server) counters() Stats {
	st := s.sess.stats.snapshot()
	st.BytesSent = s.sent.Load()
	st.Pending = s.pending.Count()
	st.PendingEvicted, st.PendingRefused = s.pending.Evictions()
	g := s.guesses.Counts()
	st.PasswordChecks, st.PasswordsWrong, st.GuessesRefused, st.PuzzlesIssued, st.PuzzleBits = g.Passwords, g.Wrong, g.Refused, g.Puzzles, g.Bits
	st.ArbiterChecks, st.ArbiterProofsWrong = g.Arbiters, g.WrongArbiter
	return st
}

// refusedBy is why a command was refused before it reached the session.
type refusedBy int

// Reasons a command is refused.
const (
	refusedRate refusedBy = iota
	refusedSpectator
	refusedInvalid
)

// refused counts one command refused for reason.
func (st *stats) refused(reason refusedBy) {
	st.update(func(s *Stats) {
		s.CommandsRefused++
		switch reason {
		case refusedRate:
			s.RefusedRate++
		case refusedSpectator:
			s.RefusedSpectator++
		case refusedInvalid:
			s.RefusedInvalid++
		}
	})
}
