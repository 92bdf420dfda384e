package host

import (
	"sync"
	"time"

	"github.com/lockhost/lockhost/lockstep"
	"github.com/lockhost/lockhost/snapshot"
	"github.com/lockhost/lockhost/wire"
)

// Regenerable sections (docs/protocol.md, section 8.6): the host tells a
// joiner whose defs matched which maps' sections it may make itself
// (Server_DefsOK's Sections), and sends the maps it made without them.

// sectionRecipes lists sim's regenerable sections as Server_DefsOK names
// them; nil when the game has none. It runs on the goroutine that owns
// sim.
func sectionRecipes(sim lockstep.Sim) []wire.SectionRecipe {
	sc, ok := sim.(lockstep.Sectioner)
	if !ok {
		return nil
	}
	ids := sim.MapIDs()
	if len(ids) > wire.MaxSections {
		return nil
	}
	var out []wire.SectionRecipe
	size := 0
	for _, id := range ids {
		s, ok := sc.MapSection(id)
		if !ok || s.Len == 0 || len(s.Recipe) > lockstep.MaxRecipe {
			continue
		}
		if size += len(s.Recipe) + sectionEntryBytes; size > maxSectionBytes {
			break // the rest go whole: Server_DefsOK stays a small frame
		}
		out = append(out, wire.SectionRecipe{MapID: id, Hash: s.Hash, Length: s.Len, Recipe: s.Recipe})
	}
	return out
}

// maxSectionBytes bounds the recipes one Server_DefsOK carries, far below
// any client's frame limit (wire.DefaultMaxFrame); sectionEntryBytes is
// the most an entry's keys and numbers take besides its recipe.
const (
	maxSectionBytes   = 64 << 10
	sectionEntryBytes = 40
)

// noteSections records sim's sections for the handshakes to come.
func (j *joinPoints) noteSections(sim lockstep.Sim) {
	r := sectionRecipes(sim)
	j.recipes.Store(&r)
}

// sections is what the latest noteSections recorded, for a handshake's
// Server_DefsOK.
func (j *joinPoints) sections() []wire.SectionRecipe {
	if r := j.recipes.Load(); r != nil {
		return *r
	}
	return nil
}

// madeSections is a joiner's Client_Username's Made by map ID; nil when
// it named none.
func madeSections(made []wire.MadeSection) map[int32]uint64 {
	if len(made) == 0 {
		return nil
	}
	out := make(map[int32]uint64, len(made))
	for _, m := range made {
		out[m.MapID] = m.Hash
	}
	return out
}

// thinPoint is a join point's thin map blobs in one codec, built once.
type thinPoint struct {
	once sync.Once
	thin *snapshot.ThinMaps
	err  error
}

// thin returns the thin map blobs of the join point in codec (pt is the
// point in that codec), building them the first time a joiner asks, once
// for every joiner that asks after.
func (j *joinPoint) thin(pt *snapshot.Point, codec snapshot.Codec) (*snapshot.ThinMaps, error) {
	j.mu.Lock()
	if j.thins == nil {
		j.thins = map[snapshot.Codec]*thinPoint{}
	}
	t := j.thins[codec]
	if t == nil {
		t = &thinPoint{}
		j.thins[codec] = t
	}
	j.mu.Unlock()
	t.once.Do(func() {
		start := time.Now()
		t.thin, t.err = snapshot.Thin(pt, compression(j.comp, codec), 0, 0)
		if t.err == nil {
			j.log.Info("thin map blobs built", "tick", pt.Tick, "codec", codec.String(),
				"build_ms", float64(time.Since(start).Microseconds())/1000, "bytes", t.thin.Size())
		}
	})
	return t.thin, t.err
}

// offerSections is Server_DefsOK's Sections for this connection, whose
// defs matched: none on a relay host, which runs no game.
func (p *peer) offerSections() []wire.SectionRecipe {
	if p.srv.sess.relay != nil {
		return nil
	}
	return p.srv.sess.points.sections()
}

// dropThins lets the point's thin map blobs go: its joiners are all in
// or gone (joinPoints.release). A joiner that names its sections later
// has them built again.
func (j *joinPoint) dropThins() {
	j.mu.Lock()
	j.thins = nil
	j.mu.Unlock()
}

// layout is how the join point pt (in the connection's codec) is laid
// out for this joiner: what it holds left out, and the maps whose
// section it made sent thin when the point has them. Thin blobs are built
// only when a section the joiner made is one of the point's, by map and
// hash: a joiner naming wrong hashes costs no build. Thin blobs that
// cannot be built are logged and the maps sent whole.
func (p *peer) layout(jr joinReply, pt *snapshot.Point) snapshot.JoinLayout {
	l := snapshot.JoinLayout{Faction: jr.faction, Granted: jr.granted, Commands: jr.cmds, Held: jr.held}
	if len(p.made) == 0 || jr.uploader || p.srv.sess.relay != nil {
		return l
	}
	if !madeAny(pt, p.made) {
		p.log.Debug("no section named matches the join point's; maps sent whole", "named", len(p.made))
		return l
	}
	thin, err := jr.point.thin(pt, p.conn.codec)
	if err != nil {
		p.log.Error("thin map blobs", "err", err)
		return l
	}
	l.Thin, l.Made = thin, p.made
	return l
}

// madeAny reports whether any map of pt has a regenerable section that
// made names with its hash: the only case where thin blobs spare anything.
func madeAny(pt *snapshot.Point, made map[int32]uint64) bool {
	for _, m := range pt.Maps {
		if m.Section == nil {
			continue
		}
		if h, ok := made[m.ID]; ok && h == m.Section.Hash {
			return true
		}
	}
	return false
}
