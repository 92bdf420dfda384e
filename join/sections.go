package join

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"time"

	"github.com/cespare/xxhash/v2"

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
}

// makeSections starts making the sections of recipes, within the join's
// limits: none over MaxRaw, at most MaxRawTotal in all.
func (s *Session) makeSections(recipes []wire.SectionRecipe) *sectionMaker {
	ctx, cancel := context.WithCancel(context.Background())
	m := &sectionMaker{cancel: cancel, done: make(chan struct{}), made: map[int32][]byte{}, hashes: map[int32]uint64{}}
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
		for _, r := range work {
			select {
			case next <- r:
			case <-ctx.Done():
				return
			}
		}
	}()
	return m
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
	var out []wire.MadeSection
	for id := range m.made {
		out = append(out, wire.MadeSection{MapID: id, Hash: m.hashes[id]})
		m.offered[id] = true
	}
	return out
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
