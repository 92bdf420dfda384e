package snapshot

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/cespare/xxhash/v2"

	"github.com/lockhost/lockhost/lockstep"
)

// Limits bound the decompressed state every loader accepts: a join's
// download, a repair and a save all apply them here.
type Limits struct {
	// MaxRaw bounds the decompressed size of the world and of each map;
	// <= 0 means each blob's declared raw size.
	MaxRaw int64
	// MaxRawTotal bounds the world and every map together; 0 means no
	// bound beyond MaxRaw per blob.
	MaxRawTotal uint64
}

// CheckBlob refuses blob i (0 the world, 1+i map i) when its declared raw
// size is over MaxRaw, before anything is inflated.
func (l Limits) CheckBlob(i int, raw uint64) error {
	if l.MaxRaw > 0 && raw > uint64(l.MaxRaw) {
		return fmt.Errorf("blob %d declares %d raw bytes, over the limit of %d: %w", i, raw, l.MaxRaw, ErrTooLarge)
	}
	return nil
}

// CheckTotal refuses n raw bytes in all when that is over MaxRawTotal.
func (l Limits) CheckTotal(n uint64) error {
	if l.MaxRawTotal > 0 && n > l.MaxRawTotal {
		return fmt.Errorf("%d raw bytes in all, over the limit of %d: %w", n, l.MaxRawTotal, ErrTooLarge)
	}
	return nil
}

// blobLimit is the most bytes a blob declaring raw bytes may inflate to:
// min(raw, limit), limit <= 0 meaning raw. A blob declaring more than
// limit is refused.
func blobLimit(raw uint64, limit int64) (int64, error) {
	if limit <= 0 || uint64(limit) > raw {
		if raw > 1<<62 {
			return 0, fmt.Errorf("raw size %d: %w", raw, ErrTooLarge)
		}
		limit = int64(raw)
	}
	if raw > uint64(limit) {
		return 0, fmt.Errorf("raw size %d over %d: %w", raw, limit, ErrTooLarge)
	}
	return limit, nil
}

// The buffer allocated up front for inflating is bounded: the declared
// raw size is only a claim, so past these the buffer grows with what the
// blob really inflates to. A blob already in memory, whose compressed
// bytes were bounded on arrival, may claim up to inflateRatio times its
// size up front (no codec here does better on game state); a blob
// streamed from a file starts at initialStreamInflateCap.
const (
	initialInflateCap       = 16 << 20
	inflateRatio            = 64
	initialStreamInflateCap = 4 << 20
)

// inflate reads the stream src of a blob compressed with c and declaring
// raw bytes, refusing more than min(raw, limit) bytes of output (limit <=
// 0: raw), into dst's storage when it is large enough, else into a buffer
// that starts at most initialCap bytes large. The limit is checked before
// anything is allocated. After the stream is read
// and before its size is compared with raw, it calls after (when not
// nil), which may still refuse the blob.
func inflate(src io.Reader, c Codec, raw uint64, limit, initialCap int64, dst []byte, after func() error) ([]byte, error) {
	limit, err := blobLimit(raw, limit)
	if err != nil {
		return nil, err
	}
	impl, ok := codecs[c]
	if !ok {
		return nil, fmt.Errorf("decompress: unknown %s", c)
	}
	zr, release, err := impl.reader(src, limit)
	if err == nil {
		defer release()
		var out []byte
		if out, err = readLimited(zr, limit, min(limit, initialCap), dst); err == nil {
			return checkInflated(out, raw, after)
		}
	}
	if impl.tooLarge(err) {
		return nil, fmt.Errorf("decompress %s: %v: %w", c, err, ErrTooLarge)
	}
	return nil, fmt.Errorf("decompress %s: %w", c, err)
}

// checkInflated runs after, then checks the inflated size against the
// declared one.
func checkInflated(out []byte, raw uint64, after func() error) ([]byte, error) {
	if after != nil {
		if err := after(); err != nil {
			return nil, err
		}
	}
	if uint64(len(out)) != raw {
		return nil, fmt.Errorf("decompress: got %d bytes, header says %d", len(out), raw)
	}
	return out, nil
}

// readLimited reads r to its end into a buffer of initial bytes (dst's
// storage when it holds that many) that grows only when the data outruns
// it, refusing more than limit bytes.
// A buffer sized right is filled in place: no copy, no slack. Once the
// buffer holds limit bytes, the end of the stream is seen by a one-byte
// probe, not by growing the buffer past the limit (which would allocate
// the whole blob a second time).
func readLimited(r io.Reader, limit, initial int64, dst []byte) ([]byte, error) {
	buf := dst[:0]
	if want := max(min(initial, limit), 512); int64(cap(dst)) < want {
		buf = make([]byte, 0, want)
	}
	for {
		if int64(len(buf)) >= limit {
			return buf, probeEOF(r, limit)
		}
		if len(buf) == cap(buf) {
			grown := make([]byte, len(buf), min(max(2*int64(cap(buf)), 512), limit))
			copy(grown, buf)
			buf = grown
		}
		n, err := r.Read(buf[len(buf):min(int64(cap(buf)), limit)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// probeEOF reads r, which has already given limit bytes, until it ends:
// one byte more is ErrTooLarge.
func probeEOF(r io.Reader, limit int64) error {
	var one [1]byte
	for range 100 {
		n, err := r.Read(one[:])
		if n > 0 {
			return fmt.Errorf("decompressed data %w of %d bytes", ErrTooLarge, limit)
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
	return io.ErrNoProgress
}

// Decompress checks b's hash, then inflates it with its codec, refusing
// more than min(b.RawSize, limit) bytes of output. limit <= 0 means
// b.RawSize.
func Decompress(b Blob, limit int64) ([]byte, error) { return decompress(nil, b, limit) }

// DecompressInto is Decompress into dst's storage when it is large enough
// for the blob (the result then aliases dst), else into a new buffer. A
// loader that is done with each blob before the next (a MapLoader) reuses
// one buffer for all of them: inflating a world's maps then touches one
// map's worth of fresh memory instead of the whole world's.
//
// A buffer made because dst was too small gets an eighth more room than
// the blob, so that the caller's next blob, a map a few things larger,
// fits in it too: a map that did not fit was inflated into fresh memory,
// every first touch of which costs (about half the maps of a 204 MiB
// world, each a little larger than one before it).
func DecompressInto(dst []byte, b Blob, limit int64) ([]byte, error) {
	if raw := b.RawSize; uint64(cap(dst)) < raw {
		initial := max(initialInflateCap, inflateRatio*int64(len(b.Data)))
		if lim, err := blobLimit(raw, limit); err == nil && raw <= uint64(min(lim, initial)) {
			dst = make([]byte, 0, raw+raw/8)
		}
	}
	return decompress(dst, b, limit)
}

func decompress(dst []byte, b Blob, limit int64) ([]byte, error) {
	if xxhash.Sum64(b.Data) != b.Hash {
		return nil, ErrHashMismatch
	}
	initial := max(initialInflateCap, inflateRatio*int64(len(b.Data)))
	if impl, ok := codecs[b.Codec]; ok && impl.whole != nil {
		lim, err := blobLimit(b.RawSize, limit)
		if err != nil {
			return nil, err
		}
		out, tried, err := impl.whole(b.Data, b.RawSize, min(lim, max(initial, int64(cap(dst)))), dst)
		if tried {
			if err != nil {
				if impl.tooLarge(err) {
					return nil, fmt.Errorf("decompress %s: %v: %w", b.Codec, err, ErrTooLarge)
				}
				return nil, fmt.Errorf("decompress %s: %w", b.Codec, err)
			}
			return checkInflated(out, b.RawSize, nil)
		}
	}
	return inflate(bytes.NewReader(b.Data), b.Codec, b.RawSize, limit, initial, dst, nil)
}

// InflateFrom streams the blob info describes from r (exactly info.Size
// bytes) through its hash and the decompressor, so the compressed blob is
// never held whole, with Decompress's limits. Bytes after the compressed
// stream count towards the hash too; a hash that differs is
// ErrHashMismatch, reported once the blob is read.
func InflateFrom(r io.Reader, info BlobInfo, limit int64) ([]byte, error) {
	hash := xxhash.New()
	src := io.TeeReader(io.LimitReader(r, int64(min(info.Size, 1<<62))), hash)
	return inflate(src, info.Codec, info.RawSize, limit, initialStreamInflateCap, nil, func() error {
		if _, err := io.Copy(io.Discard, src); err != nil {
			return err
		}
		if hash.Sum64() != info.Hash {
			return ErrHashMismatch
		}
		return nil
	})
}

// Assembly rebuilds a simulation from a header's inflated blobs. With a
// lockstep.MapLoader each map is handed over as it is added, so its raw
// bytes can be dropped; with a lockstep.Loader the maps are kept until
// Finish. World comes first when a MapLoader is used; an Assembly is not
// safe for concurrent use, but for its maps when Concurrent says so.
type Assembly struct {
	h     *Header
	load  lockstep.Loader
	ml    lockstep.MapLoader
	asm   lockstep.MapAssembly
	world []byte
	maps  [][]byte
}

// Assemble starts rebuilding the simulation h describes, map by map with
// ml when it is not nil, otherwise all at once with load.
func (h *Header) Assemble(load lockstep.Loader, ml lockstep.MapLoader) (*Assembly, error) {
	switch {
	case ml != nil:
		return &Assembly{h: h, ml: ml}, nil
	case load != nil:
		return &Assembly{h: h, load: load, maps: make([][]byte, len(h.Maps))}, nil
	}
	return nil, errors.New("no loader")
}

// World takes the inflated world-level state.
func (a *Assembly) World(raw []byte) error {
	if a.ml == nil {
		a.world = raw
		return nil
	}
	asm, err := a.ml.Begin(raw, len(a.h.Maps))
	if err != nil {
		return fmt.Errorf("load: %w", err)
	}
	a.asm = asm
	return nil
}

// Map takes map i of the header, inflated. raw is handed over (a
// MapLoader may keep it in the world it builds): the caller must not use
// it again.
func (a *Assembly) Map(i int, raw []byte) error { return a.addMap(i, raw, true) }

// MapCopy is Map for a buffer the caller reuses once it returns (one
// DecompressInto buffer for every map): the loader keeps copies of what
// it needs, never raw itself.
func (a *Assembly) MapCopy(i int, raw []byte) error { return a.addMap(i, raw, false) }

func (a *Assembly) addMap(i int, raw []byte, owned bool) error {
	if i < 0 || i >= len(a.h.Maps) {
		return fmt.Errorf("map %d of a header of %d", i, len(a.h.Maps))
	}
	if a.ml == nil {
		if !owned {
			raw = bytes.Clone(raw)
		}
		a.maps[i] = raw
		return nil
	}
	id := a.h.Maps[i].ID
	if a.asm == nil {
		return fmt.Errorf("load map %d: no world blob", id)
	}
	if err := a.asm.AddMap(lockstep.MapBlob{ID: id, Data: raw, Owned: owned}); err != nil {
		return fmt.Errorf("load map %d: %w", id, err)
	}
	return nil
}

// Concurrent reports whether Map and MapCopy may be called from several
// goroutines at once, each with a different map: once World has
// returned, when the game's assembly says its AddMap calls may overlap
// (lockstep.ConcurrentMapAssembly).
func (a *Assembly) Concurrent() bool {
	_, ok := a.asm.(lockstep.ConcurrentMapAssembly)
	return ok
}

// Finish loads what was added and checks the result against the header:
// tick, every map's state hash and the world hash.
func (a *Assembly) Finish() (lockstep.Sim, error) {
	if a.ml == nil {
		if a.world == nil {
			return nil, errors.New("no world blob")
		}
		return a.h.Load(a.load, a.world, a.maps)
	}
	if a.asm == nil {
		return nil, errors.New("no world blob")
	}
	sim, err := a.asm.Finish()
	if err != nil {
		return nil, fmt.Errorf("load: %w", err)
	}
	if err := a.h.Verify(sim); err != nil {
		return nil, err
	}
	return sim, nil
}

// LoadBlobs is the one sequential loading path: it inflates the world,
// then each map in header order, with inflate (given blob i, 0 the world
// and 1+i map i, and lim.MaxRaw), holding the raw bytes of all of them
// together to lim.MaxRawTotal, and assembles them as Assemble does (each
// buffer inflate returns is handed over, as to Assembly.Map). Errors
// from inflate are returned as they are, so it can name its blobs.
func (h *Header) LoadBlobs(lim Limits, inflate func(i int, maxRaw int64) ([]byte, error), load lockstep.Loader, ml lockstep.MapLoader) (lockstep.Sim, error) {
	for _, m := range h.Maps {
		if m.Cut != nil {
			return nil, fmt.Errorf("map %d was sent without its regenerable section", m.ID)
		}
	}
	a, err := h.Assemble(load, ml)
	if err != nil {
		return nil, err
	}
	var total uint64
	for i := range 1 + len(h.Maps) {
		raw, err := inflate(i, lim.MaxRaw)
		if err != nil {
			return nil, err
		}
		total += uint64(len(raw))
		if err := lim.CheckTotal(total); err != nil {
			return nil, err
		}
		if i == 0 {
			err = a.World(raw)
		} else {
			err = a.Map(i-1, raw)
		}
		if err != nil {
			return nil, err
		}
	}
	return a.Finish()
}

// BlobName names blob i of h (0 the world, 1+i map i) for errors.
func (h *Header) BlobName(i int) string {
	switch {
	case i == 0:
		return "world"
	case i > 0 && i <= len(h.Maps):
		return fmt.Sprintf("map %d", h.Maps[i-1].ID)
	}
	return fmt.Sprintf("blob %d", i)
}
