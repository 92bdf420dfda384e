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
	MaxMaps = 64
	// MinSide is the smallest map width or height.
	MinSide = 8
	// MaxSide is the largest map width or height.
	MaxSide = 1000
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
	}
	return nil
}
