package join

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/cespare/xxhash/v2"
	"github.com/klauspost/compress/flate"

	"github.com/lockhost/lockhost/wire"
)

// Regenerable sections (docs/protocol.md, section 8.6): the maps' parts
// the game makes from the host's recipes, named in Client_Username so the
// host sends those maps without them, and spliced back in as the maps
// arrive.

// sectionMaker makes the sections of one join on up to GOMAXPROCS
// goroutines. Only sections whose bytes hash to the host's hash are kept.
type sectionMaker struct {
	cancel context.CancelFunc
	done   chan struct{} // closed when every worker has stopped

	mu      sync.Mutex
	made    map[int32][]byte // by map ID, hash-checked
	hashes  map[int32]uint64
	offered map[int32]bool // named in Client_Username
	// decided is whether the sections are to be made (true from the
	// start with Config.SectionsAlways, else once probe has chosen);
	// offer names only those made for a join that chose to make them.
	// why is the choice's sentence (sectionchoice.go), "" when always.
	decided, chosen bool
	why             string
}

// makeSections starts making the sections of recipes, within the join's
// limits: none over MaxRaw, at most MaxRawTotal in all. Unless
// Config.SectionsAlways, it makes none for a host on this machine or its
// LAN (it returns nil and why), and makes the smallest section first,
// alone, to decide from what it took whether to make the rest.
func (s *Session) makeSections(recipes []wire.SectionRecipe) (m *sectionMaker, why string) {
	if !s.cfg.SectionsAlways && hostLocal(s.nc.RemoteAddr()) {
		_, why = sectionChoice{Local: true}.decide()
		return nil, why
	}
	ctx, cancel := context.WithCancel(context.Background())
	m = &sectionMaker{cancel: cancel, done: make(chan struct{}), made: map[int32][]byte{}, hashes: map[int32]uint64{},
		decided: s.cfg.SectionsAlways, chosen: s.cfg.SectionsAlways}
	var total uint64
	var work []wire.SectionRecipe
	for _, r := range recipes {
		if _, dup := m.hashes[r.MapID]; dup || r.Length == 0 || r.Length > uint64(s.cfg.MaxRaw) || total+r.Length > s.cfg.MaxRawTotal {
			continue
		}
		total += r.Length
		m.hashes[r.MapID] = r.Hash
		work = append(work, r)
	}
	next := make(chan wire.SectionRecipe)
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(work)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range next {
				m.make(ctx, s, r)
			}
		}()
	}
	go func() {
		defer close(m.done)
		defer wg.Wait()
		defer close(next)
		if !s.cfg.SectionsAlways && len(work) > 0 {
			ok := false
			work, ok = m.probe(ctx, s, work, total)
			if !ok {
				return
			}
		}
		for _, r := range work {
			select {
			case next <- r:
			case <-ctx.Done():
				return
			}
		}
	}()
	return m, ""
}

// probe makes the smallest section of work alone, timed, and decides
// from it whether to make the rest (sectionChoice): what making all
// total bytes would take on this machine at that pace (one core's worth,
// which is what a loaded machine gives), against the download the
// sections spare, estimated from how well the section made deflates.
// It returns the rest of the work and whether to make it; when not, no
// section is offered, not even the one made, so that the host builds
// nothing for the join. A choice made after offer changes nothing.
func (m *sectionMaker) probe(ctx context.Context, s *Session, work []wire.SectionRecipe, total uint64) ([]wire.SectionRecipe, bool) {
	first := 0
	for i, r := range work {
		if r.Length < work[first].Length {
			first = i
		}
	}
	r := work[first]
	rest := append(slices.Clone(work[:first]), work[first+1:]...)
	start := time.Now()
	m.make(ctx, s, r)
	took := time.Since(start)
	m.mu.Lock()
	b := m.made[r.MapID]
	m.mu.Unlock()
	c := sectionChoice{Throughput: s.cfg.LinkSpeed, Making: time.Duration(float64(took) * float64(total) / float64(r.Length))}
	if b != nil {
		c.Saved = uint64(float64(total) * deflated(b) / float64(len(b)))
	}
	ok, why := c.decide()
	if b == nil && ctx.Err() == nil {
		ok, why = false, "not made: the first section made was not the host's"
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.offered != nil {
		return nil, false
	}
	m.decided, m.chosen, m.why = true, ok, why
	return rest, ok
}

// make makes one section and keeps it if its hash is the host's. The
// builder stops when ctx is done: once offer has named the sections made,
// one still being made is of no use.
func (m *sectionMaker) make(ctx context.Context, s *Session, r wire.SectionRecipe) {
	b, err := s.cfg.Sections(ctx, r.Recipe, r.Length)
	if err == nil && uint64(len(b)) == r.Length && xxhash.Sum64(b) == r.Hash {
		m.mu.Lock()
		m.made[r.MapID] = b
		m.mu.Unlock()
		return
	}
	if err == nil {
		err = fmt.Errorf("%d bytes made, hash %016x; the host's are %d, %016x", len(b), xxhash.Sum64(b), r.Length, r.Hash)
	}
	s.cfg.Logger.Debug("section not made", "map", r.MapID, "err", err)
}

// offer waits up to wait for the sections still being made, stops the
// rest (those waiting and those being made) and returns those made, for
// Client_Username.
func (m *sectionMaker) offer(wait time.Duration) []wire.MadeSection {
	if wait > 0 {
		t := time.NewTimer(wait)
		select {
		case <-m.done:
		case <-t.C:
		}
		t.Stop()
	}
	m.cancel()
	m.mu.Lock()
	defer m.mu.Unlock()
	m.offered = map[int32]bool{}
	if !m.decided {
		m.decided, m.why = true, "not made: the first section was not made within the wait"
	}
	if !m.chosen {
		return nil
	}
	var out []wire.MadeSection
	for id := range m.made {
		out = append(out, wire.MadeSection{MapID: id, Hash: m.hashes[id]})
		m.offered[id] = true
	}
	return out
}

// deflated is how many bytes b deflates to, from its first deflateSample
// bytes: an estimate of what it takes on the wire in the host's codec
// (zstd packs a colony's terrain a fifth tighter), close enough to weigh
// a choice, at a fraction of making it.
func deflated(b []byte) float64 {
	sample := b[:min(len(b), deflateSample)]
	var n countWriter
	w, err := flate.NewWriter(&n, flate.BestSpeed)
	if err != nil {
		return float64(len(b))
	}
	_, _ = w.Write(sample)
	_ = w.Close()
	return float64(n) * float64(len(b)) / float64(len(sample))
}

// deflateSample bounds the bytes of a section deflated to estimate how
// well the sections compress.
const deflateSample = 512 << 10

// countWriter counts the bytes written to it.
type countWriter int64

func (c *countWriter) Write(p []byte) (int, error) {
	*c += countWriter(len(p))
	return len(p), nil
}

// choice is the sentence saying whether the sections were made and why;
// "" while undecided, or when they are made whatever the link.
func (m *sectionMaker) choice() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.why
}

// section returns the section made for map id if it was offered, else
// nil.
func (m *sectionMaker) section(id int32) []byte {
	if m == nil {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.offered[id] {
		return nil
	}
	return m.made[id]
}

// drop lets the sections go once the world is loaded.
func (m *sectionMaker) drop() {
	if m == nil {
		return
	}
	m.cancel()
	m.mu.Lock()
	m.made = nil
	m.mu.Unlock()
}
