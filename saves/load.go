package saves

import (
	"errors"
	"fmt"

	"github.com/lockhost/lockhost/lockstep"
	"github.com/lockhost/lockhost/snapshot"
)

// replayStep is how many ticks Load simulates between checks.
const replayStep = 1 << 16

// Load rebuilds the simulation saved in f: it decompresses and loads the
// snapshot (with loader, or map by map with mapLoader if it is not nil),
// checks it against the snapshot header's tick and hashes, then replays the
// saved commands with a lockstep.Follower up to f.Meta.Tick, so the
// returned simulation is at the tick the session was saved at. Commands
// stamped f.Meta.Tick are applied too, as a joiner granted that tick
// would. maxRaw bounds each decompressed blob (<= 0: its declared size).
func Load(f *File, loader lockstep.Loader, mapLoader lockstep.MapLoader, maxRaw int64) (lockstep.Sim, error) {
	if f == nil || f.Body == nil {
		return nil, errors.New("load save: no save")
	}
	if loader == nil && mapLoader == nil {
		return nil, errors.New("load save: no loader")
	}
	var (
		sim lockstep.Sim
		err error
	)
	if mapLoader != nil {
		sim, err = loadMaps(f.Body, mapLoader, maxRaw)
	} else {
		sim, err = f.Body.Load(loader, snapshot.Limits{MaxRaw: maxRaw})
	}
	if err != nil {
		return nil, fmt.Errorf("load save: %w", err)
	}
	h := &f.Body.Header
	var cmds []lockstep.Command
	for _, mc := range h.Commands {
		cmds = append(cmds, mc.Commands...)
	}
	fol, err := lockstep.NewFollower(sim, cmds)
	if err != nil {
		return nil, fmt.Errorf("load save: commands: %w", err)
	}
	fol.Grant(f.Meta.Tick)
	for {
		if _, err := fol.Run(replayStep); err != nil {
			return nil, fmt.Errorf("load save: replay to tick %d: %w", f.Meta.Tick, err)
		}
		if fol.Behind() == 0 {
			break
		}
	}
	if t := sim.Tick(); t != f.Meta.Tick {
		return nil, fmt.Errorf("load save: replay stopped at tick %d, the save is at tick %d", t, f.Meta.Tick)
	}
	return sim, nil
}

// loadMaps inflates and hands over one map at a time, so only one map's
// raw bytes are held at once.
func loadMaps(p *snapshot.Parsed, ml lockstep.MapLoader, maxRaw int64) (lockstep.Sim, error) {
	world, err := snapshot.Decompress(p.World, maxRaw)
	if err != nil {
		return nil, fmt.Errorf("world data: %w", err)
	}
	asm, err := ml.Begin(world, len(p.Maps))
	if err != nil {
		return nil, fmt.Errorf("load: %w", err)
	}
	for i, b := range p.Maps {
		id := p.Header.Maps[i].ID
		raw, err := snapshot.Decompress(b, maxRaw)
		if err != nil {
			return nil, fmt.Errorf("map %d data: %w", id, err)
		}
		if err := asm.AddMap(lockstep.MapBlob{ID: id, Data: raw}); err != nil {
			return nil, fmt.Errorf("load map %d: %w", id, err)
		}
	}
	sim, err := asm.Finish()
	if err != nil {
		return nil, fmt.Errorf("load: %w", err)
	}
	if err := p.Header.Verify(sim); err != nil {
		return nil, err
	}
	return sim, nil
}
