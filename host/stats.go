package host

import (
	"sync"
	"time"

	"github.com/lockhost/lockhost/snapshot"
)

// Stats are counters of the host's work on join points.
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

// Stats returns the host's join point counters.
func (s *Server) Stats() Stats { return s.sess.stats.snapshot() }
