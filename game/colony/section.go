package colony

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/lockhost/lockhost/lockstep"
)

// The regenerable section of a map's encoding is its terrain: written by
// the generator alone, from the world's seed, the map's ID and its size,
// and never changed after. A joiner that runs the same content makes it
// itself (SectionBuilder) rather than downloading most of a map's bytes.
//
// Recipe: version byte 1, the content fingerprint and the world's seed
// (8 bytes little endian each), then the map ID, width and height as
// unsigned varints.
const recipeVersion = 1

// MapSection describes map id's terrain in its encoding (MarshalMap):
// where it lies, its hash and the recipe to make it again. It implements
// lockstep.Sectioner; it only reads the world.
func (w *World) MapSection(id int32) (lockstep.Section, bool) {
	m := w.mapByID(id)
	if m == nil {
		return lockstep.Section{}, false
	}
	e := encoder{buf: make([]byte, 0, 64)}
	w.encodeMapPrefix(m, &e)
	rec := []byte{recipeVersion}
	rec = binary.LittleEndian.AppendUint64(rec, w.r.fingerprint)
	rec = binary.LittleEndian.AppendUint64(rec, w.seed)
	rec = binary.AppendUvarint(rec, uint64(m.ID))
	rec = binary.AppendUvarint(rec, uint64(m.W))
	rec = binary.AppendUvarint(rec, uint64(m.H))
	return lockstep.Section{Offset: uint64(len(e.buf)), Len: uint64(m.Terrain.len()), Hash: m.terrainHash(), Recipe: rec}, true
}

// errRecipe is a recipe that is not one of this content's.
var errRecipe = errors.New("colony: not a terrain recipe of this content")

// SectionBuilder returns the lockstep.SectionBuilder of content: the
// terrain of the map a recipe names, one byte a cell, generated without
// anything placed on it. A recipe for other content, or one that names a
// map off the limits (Config), is refused.
func SectionBuilder(content *Content) lockstep.SectionBuilder {
	r, err := compile(content)
	var tt *terrainTable
	if err == nil {
		tt = newTerrainTable(r)
	}
	return func(ctx context.Context, recipe []byte, maxLen uint64) ([]byte, error) {
		if err != nil {
			return nil, err
		}
		seed, id, W, H, err := parseRecipe(recipe, r.fingerprint)
		if err != nil {
			return nil, err
		}
		if n := uint64(W) * uint64(H); n > maxLen {
			return nil, fmt.Errorf("colony: terrain of %dx%d exceeds %d bytes", W, H, maxLen)
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		out := make([]byte, int(W)*int(H))
		terrainRows(tt, mapSeed(seed, id), W, H, func(y int32, row []uint8) bool {
			copy(out[int(y)*int(W):], row)
			return ctx.Err() == nil // a row is a few microseconds' work
		})
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		return out, nil
	}
}

// parseRecipe reads a terrain recipe made for the content of fingerprint
// fp.
func parseRecipe(b []byte, fp uint64) (seed uint64, id, W, H int32, err error) {
	if len(b) < 17 || len(b) > lockstep.MaxRecipe || b[0] != recipeVersion || binary.LittleEndian.Uint64(b[1:]) != fp {
		return 0, 0, 0, 0, errRecipe
	}
	seed = binary.LittleEndian.Uint64(b[9:])
	rest := b[17:]
	var v [3]uint64
	for i := range v {
		n := 0
		v[i], n = binary.Uvarint(rest)
		if n <= 0 {
			return 0, 0, 0, 0, errRecipe
		}
		rest = rest[n:]
	}
	if len(rest) != 0 || v[0] >= MaxMaps || v[1] < MinSide || v[1] > MaxSide || v[2] < MinSide || v[2] > MaxSide {
		return 0, 0, 0, 0, errRecipe
	}
	return seed, int32(v[0]), int32(v[1]), int32(v[2]), nil
}
