package saves

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/cespare/xxhash/v2"
	"github.com/klauspost/compress/gzip"

	"github.com/lockhost/lockhost/lockstep"
	"github.com/lockhost/lockhost/snapshot"
)

// replayStep is how many ticks Load simulates between checks.
const replayStep = 1 << 16

// initialInflate bounds the buffer allocated up front for one blob: the
// declared raw size is only a claim, so the buffer grows with what the
// blob really inflates to.
const initialInflate = 4 << 20

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
	var sim lockstep.Sim
	if mapLoader != nil {
		sim, err = f.loadMaps(r, mapLoader, maxRaw)
	} else {
		sim, err = f.loadAll(r, loader, maxRaw)
	}
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
	if i == 0 {
		return "world data"
	}
	return fmt.Sprintf("map %d data", f.Header.Maps[i-1].ID)
}

// loadMaps inflates and hands over one map at a time, so only one map's
// raw bytes are held at once.
func (f *File) loadMaps(r io.ReaderAt, ml lockstep.MapLoader, maxRaw int64) (lockstep.Sim, error) {
	world, err := f.inflate(r, 0, maxRaw)
	if err != nil {
		return nil, err
	}
	asm, err := ml.Begin(world, len(f.Header.Maps))
	if err != nil {
		return nil, fmt.Errorf("load: %w", err)
	}
	world = nil
	for i, m := range f.Header.Maps {
		raw, err := f.inflate(r, i+1, maxRaw)
		if err != nil {
			return nil, err
		}
		if err := asm.AddMap(lockstep.MapBlob{ID: m.ID, Data: raw}); err != nil {
			return nil, fmt.Errorf("load map %d: %w", m.ID, err)
		}
	}
	sim, err := asm.Finish()
	if err != nil {
		return nil, fmt.Errorf("load: %w", err)
	}
	if err := f.Header.Verify(sim); err != nil {
		return nil, err
	}
	return sim, nil
}

// loadAll inflates every blob and hands them over at once.
func (f *File) loadAll(r io.ReaderAt, load lockstep.Loader, maxRaw int64) (lockstep.Sim, error) {
	world, err := f.inflate(r, 0, maxRaw)
	if err != nil {
		return nil, err
	}
	maps := make([][]byte, len(f.Header.Maps))
	for i := range maps {
		if maps[i], err = f.inflate(r, i+1, maxRaw); err != nil {
			return nil, err
		}
	}
	return f.Header.Load(load, world, maps)
}

// inflate streams blob i from r through its hash and the decompressor,
// refusing more than min(declared raw size, limit) bytes of output
// (limit <= 0: the declared size).
func (f *File) inflate(r io.ReaderAt, i int, limit int64) ([]byte, error) {
	b := f.blobs[i]
	name := f.blobName(i)
	raw := b.info.RawSize
	if raw > 1<<62 {
		return nil, fmt.Errorf("%s: raw size %d: %w", name, raw, snapshot.ErrTooLarge)
	}
	if limit <= 0 || uint64(limit) > raw {
		limit = int64(raw)
	}
	if raw > uint64(limit) {
		return nil, fmt.Errorf("%s: raw size %d over %d: %w", name, raw, limit, snapshot.ErrTooLarge)
	}
	hash := xxhash.New()
	src := io.TeeReader(io.NewSectionReader(r, b.off, int64(b.info.Size)), hash)
	zr, err := gzip.NewReader(src)
	if err != nil {
		return nil, fmt.Errorf("%s: decompress: %w", name, err)
	}
	zr.Multistream(false)
	out := bytes.NewBuffer(make([]byte, 0, min(limit, initialInflate)))
	n, err := io.Copy(out, io.LimitReader(zr, limit+1))
	if err != nil {
		return nil, fmt.Errorf("%s: decompress: %w", name, err)
	}
	if n > limit {
		return nil, fmt.Errorf("%s: decompressed data %w of %d bytes", name, snapshot.ErrTooLarge, limit)
	}
	// Whatever follows the gzip stream is part of the blob's hash too.
	if _, err := io.Copy(io.Discard, src); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if hash.Sum64() != b.info.Hash {
		return nil, fmt.Errorf("%s: %w (the file changed since it was checked)", name, snapshot.ErrHashMismatch)
	}
	if uint64(n) != raw {
		return nil, fmt.Errorf("%s: decompress: got %d bytes, header says %d", name, n, raw)
	}
	return out.Bytes(), nil
}
