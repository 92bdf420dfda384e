package colony

import "fmt"

// Config defaults and limits.
const (
	// DefaultMaps is the number of maps of the zero Config.
	DefaultMaps = 4
	// DefaultWidth is the map width of the zero Config.
	DefaultWidth = 250
	// DefaultHeight is the map height of the zero Config.
	DefaultHeight = 250
	// DefaultPawnsPerMap is the pawn count per map of the zero Config.
	DefaultPawnsPerMap = 30
	// DefaultThingsPerMap is the scattered thing count per map of the zero Config.
	DefaultThingsPerMap = 600

	// MaxMaps is the most maps a world may have.
	MaxMaps = 256
	// MinSide is the smallest map width or height.
	MinSide = 8
	// MaxSide is the largest map width or height. Terrain encodes to one
	// byte per cell, so a map encodes to at least width*height bytes: up
	// to 16 MiB each, 4 GiB for MaxMaps maps. Memory stays close to that
	// or below: terrain takes half a byte per cell in memory when the
	// content has at most 16 terrain types, and besides its terrain, a map
	// holds one bit per cell, data in
	// proportion to its things and pawns and, if it has pawns, its
	// passable runs (a few per row on generated terrain).
	MaxSide = 4096
	// MaxPawnsPerMap is the most pawns a map may hold.
	MaxPawnsPerMap = 1000
	// MaxThingsPerMap is the most things a map may hold; spawning stops there.
	MaxThingsPerMap = 50000
)

// Config describes a world to generate. Zero fields take the defaults
// above, so the zero Config is a valid default world (seed 0).
type Config struct {
	// Maps is the number of maps (1..MaxMaps).
	Maps int
	// Width and Height are the map size in cells (MinSide..MaxSide).
	Width, Height int
	// Seed drives every random choice of generation and simulation.
	Seed uint64
	// PawnsPerMap is the number of pawns placed on each map.
	PawnsPerMap int
	// ThingsPerMap is the number of things scattered on each map.
	ThingsPerMap int
	// IdleMaps is the number of maps, the ones with the highest IDs, that
	// get no pawns (0..Maps; 0 means none). Such a map only changes when
	// plants take root, grow or stacks decay, so a host can reuse its
	// encoding between join points (World.MapVersion).
	IdleMaps int
}

// withDefaults fills zero fields with the defaults. It is the only place
// defaults are decided.
func (c Config) withDefaults() Config {
	if c.Maps == 0 {
		c.Maps = DefaultMaps
	}
	if c.Width == 0 {
		c.Width = DefaultWidth
	}
	if c.Height == 0 {
		c.Height = DefaultHeight
	}
	if c.PawnsPerMap == 0 {
		c.PawnsPerMap = DefaultPawnsPerMap
	}
	if c.ThingsPerMap == 0 {
		c.ThingsPerMap = DefaultThingsPerMap
	}
	return c
}

// Validate reports whether the config, with defaults filled in, is within
// limits.
func (c Config) Validate() error {
	c = c.withDefaults()
	switch {
	case c.Maps < 1 || c.Maps > MaxMaps:
		return fmt.Errorf("colony: config: %d maps, want 1..%d", c.Maps, MaxMaps)
	case c.Width < MinSide || c.Width > MaxSide:
		return fmt.Errorf("colony: config: width %d, want %d..%d", c.Width, MinSide, MaxSide)
	case c.Height < MinSide || c.Height > MaxSide:
		return fmt.Errorf("colony: config: height %d, want %d..%d", c.Height, MinSide, MaxSide)
	case c.PawnsPerMap < 1 || c.PawnsPerMap > MaxPawnsPerMap || c.PawnsPerMap > c.Width*c.Height/4:
		return fmt.Errorf("colony: config: %d pawns per map, want 1..%d (and at most a quarter of the cells)",
			c.PawnsPerMap, MaxPawnsPerMap)
	case c.ThingsPerMap < 1 || c.ThingsPerMap > MaxThingsPerMap/2 || c.ThingsPerMap > c.Width*c.Height/2:
		return fmt.Errorf("colony: config: %d things per map, want 1..%d (and at most half of the cells)",
			c.ThingsPerMap, MaxThingsPerMap/2)
	case c.IdleMaps < 0 || c.IdleMaps > c.Maps:
		return fmt.Errorf("colony: config: %d idle maps, want 0..%d (the number of maps)", c.IdleMaps, c.Maps)
	}
	return nil
}

// Size model of SizedConfig, from measurements of the default content:
// terrain is one byte per cell, a scattered thing encodes to about 12
// bytes, a pawn to about 40, and the default world scatters 600 things
// on 250x250 cells.
const (
	sizeThingBytes = 12
	sizePawnBytes  = 40
	sizeMapBytes   = 64
	sizeBigSide    = 2048 // SizedConfig adds maps rather than grow them past this
)

// RawEstimate is about how many bytes the encoding of a world generated
// with c takes (MarshalWorld plus every MarshalMap), by the size model
// SizedConfig meets, with defaults filled in: for sizing memory ahead of
// generation, not a bound.
func (c Config) RawEstimate() int64 {
	c = c.withDefaults()
	perMap := sizeMapBytes + int64(c.Width)*int64(c.Height) +
		sizeThingBytes*int64(c.ThingsPerMap) + sizePawnBytes*int64(c.PawnsPerMap)
	return int64(c.Maps) * perMap
}

// SizedConfig returns a config for a world whose encoding (MarshalWorld
// plus every MarshalMap) takes about raw bytes, for benchmarks and load
// tests. It keeps DefaultMaps square maps while they fit in 2048 cells a
// side, then doubles the number of maps up to MaxMaps, then grows the maps
// up to MaxSide; things are as dense as in the default world (up to
// MaxThingsPerMap/2 per map) and each map has DefaultPawnsPerMap pawns.
// The size is met within a few percent (generation places a few more or
// fewer things); raw is clamped to what the limits allow.
//
// For example SizedConfig(64<<20, seed) gives 16 maps of 1973x1973 with
// 25000 things each, and SizedConfig(512<<20, seed) 128 such maps.
func SizedConfig(raw int64, seed uint64) Config {
	maps := int64(DefaultMaps)
	side := sizedSide(raw / maps)
	for side > sizeBigSide && maps*2 <= MaxMaps {
		maps *= 2
		side = sizedSide(raw / maps)
	}
	side = max(MinSide, min(MaxSide, side))
	cells := side * side
	return Config{
		Maps:         int(maps),
		Width:        int(side),
		Height:       int(side),
		Seed:         seed,
		PawnsPerMap:  int(max(1, min(DefaultPawnsPerMap, cells/4))),
		ThingsPerMap: int(sizedThings(cells)),
	}
}

// sizedThings is the number of things SizedConfig scatters on a map.
func sizedThings(cells int64) int64 {
	d := int64(DefaultThingsPerMap) * cells / (DefaultWidth * DefaultHeight)
	return max(1, min(MaxThingsPerMap/2, cells/2, d))
}

// sizedSide is the side of a square map that encodes to about per bytes.
func sizedSide(per int64) int64 {
	rest := per - sizeMapBytes - sizePawnBytes*DefaultPawnsPerMap
	// cells + sizeThingBytes*sizedThings(cells) = rest, sizedThings
	// growing with cells up to its cap
	cells := rest * (DefaultWidth * DefaultHeight) / (DefaultWidth*DefaultHeight + sizeThingBytes*DefaultThingsPerMap)
	if sizedThings(cells) >= MaxThingsPerMap/2 {
		cells = rest - sizeThingBytes*MaxThingsPerMap/2
	}
	if cells <= 0 {
		return 0
	}
	lo, hi := int64(0), min(cells, 1<<31) // integer square root, no floating point
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if mid*mid <= cells {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return lo
}
