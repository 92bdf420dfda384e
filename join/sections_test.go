package join

import (
	"context"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/cespare/xxhash/v2"

	"github.com/lockhost/lockhost/testing/testkit"
	"github.com/lockhost/lockhost/wire"
)

// TestSectionsOfferStopsMaking: offer names the sections made and stops
// the one being made, not only those queued: the builder sees its
// context done and every worker ends, so nothing made after the offer
// takes the cores the download and catch-up need.
func TestSectionsOfferStopsMaking(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		quick := []byte{1, 2, 3}
		var started, stopped atomic.Int32
		build := func(ctx context.Context, recipe []byte, maxLen uint64) ([]byte, error) {
			if recipe[0] == 0 {
				return quick, nil
			}
			started.Add(1)
			<-ctx.Done() // a section that takes longer than the wait
			stopped.Add(1)
			return nil, ctx.Err()
		}
		s := &Session{cfg: Config{Sections: build, Logger: testkit.Quiet()}.Defaults()}
		recipes := []wire.SectionRecipe{{MapID: 0, Length: 3, Hash: xxhash.Sum64(quick), Recipe: []byte{0}}}
		for id := int32(1); id <= 4; id++ {
			recipes = append(recipes, wire.SectionRecipe{MapID: id, Length: 3, Hash: 1, Recipe: []byte{1}})
		}
		m := s.makeSections(recipes)
		synctest.Wait()
		made := m.offer(-1)
		if len(made) != 1 || made[0].MapID != 0 {
			t.Fatalf("offered %v; want map 0 alone", made)
		}
		synctest.Wait()
		select {
		case <-m.done:
		default:
			t.Fatalf("workers still running after the offer: %d sections started, %d stopped", started.Load(), stopped.Load())
		}
		if started.Load() == 0 || stopped.Load() != started.Load() {
			t.Fatalf("%d sections started, %d stopped; want some, all stopped", started.Load(), stopped.Load())
		}
	})
}
