package saves

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/lockhost/lockhost/lockstep"
	"github.com/lockhost/lockhost/snapshot"
)

// replayStep is how many ticks Load simulates between checks.
const replayStep = 1 << 16

// Load rebuilds the simulation saved in f: it reads each blob from
// f.Path again, streaming it through its hash and the decompressor (so
// no compressed blob is held whole), loads the snapshot (with loader, or
// map by map with mapLoader if it is not nil), checks it against the
// snapshot header's tick and hashes, then replays the saved commands with
// a lockstep.Follower up to f.Meta.Tick, so the returned simulation is at
// the tick the session was saved at. Commands stamped f.Meta.Tick are
// applied too, as a joiner granted that tick would. maxRaw bounds each
// decompressed blob (<= 0: its declared size). With mapLoader, memory is
// the world's raw state plus one map's; with loader, every map's raw
// state.
func Load(f *File, loader lockstep.Loader, mapLoader lockstep.MapLoader, maxRaw int64) (lockstep.Sim, error) {
	if f == nil || len(f.blobs) == 0 {
		return nil, errors.New("load save: no save")
	}
	if loader == nil && mapLoader == nil {
		return nil, errors.New("load save: no loader")
	}
	r, err := os.Open(f.Path)
	if err != nil {
		return nil, fmt.Errorf("load save: %w", err)
	}
	defer r.Close()
	return LoadFrom(f, r, loader, mapLoader, maxRaw)
}

// LoadFrom is Load reading the blobs from r, which holds the bytes f was
// read from (ReadFrom's), rather than from f.Path.
func LoadFrom(f *File, r io.ReaderAt, loader lockstep.Loader, mapLoader lockstep.MapLoader, maxRaw int64) (lockstep.Sim, error) {
	if f == nil || len(f.blobs) == 0 {
		return nil, errors.New("load save: no save")
	}
	if loader == nil && mapLoader == nil {
		return nil, errors.New("load save: no loader")
	}
	inflate := func(i int, limit int64) ([]byte, error) { return f.inflate(r, i, limit) }
	sim, err := f.Header.LoadBlobs(snapshot.Limits{MaxRaw: maxRaw}, inflate, loader, mapLoader)
	if err != nil {
		return nil, fmt.Errorf("load save: %w", err)
	}
	h := &f.Header
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

// blobName names blob i for errors.
func (f *File) blobName(i int) string {
	return f.Header.BlobName(i) + " data"
}

// inflate streams blob i from r through its hash and the decompressor
// (snapshot.InflateFrom), refusing more than min(declared raw size,
// limit) bytes of output (limit <= 0: the declared size).
func (f *File) inflate(r io.ReaderAt, i int, limit int64) ([]byte, error) {
	b := f.blobs[i]
	raw, err := snapshot.InflateFrom(io.NewSectionReader(r, b.off, int64(b.info.Size)), b.info, limit)
	if errors.Is(err, snapshot.ErrHashMismatch) {
		return nil, fmt.Errorf("%s: %w (the file changed since it was checked)", f.blobName(i), err)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", f.blobName(i), err)
	}
	return raw, nil
}
