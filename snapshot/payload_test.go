package snapshot

import (
	"bytes"
	"encoding/binary"
	"errors"
	"github.com/cespare/xxhash/v2"
	"math/rand/v2"
	"reflect"
	"runtime"
	"slices"
	"strconv"
	"testing"

	"github.com/klauspost/compress/gzip"
	"github.com/lockhost/lockhost/internal/codec"
	"github.com/lockhost/lockhost/lockstep"
	"github.com/lockhost/lockhost/lockstep/locksteptest"
	"github.com/lockhost/lockhost/wire"
)

// runSim returns a Counters world with n maps of size bytes that has run
// ticks ticks with a few commands, so its state is not all zeros.
func runSim(t testing.TB, n, size, ticks int) *locksteptest.Counters {
	sim := locksteptest.New(n, size)
	r := rand.New(rand.NewPCG(uint64(n), uint64(size)))
	for range ticks {
		if r.IntN(3) == 0 {
			cmd := lockstep.Command{Tick: sim.Tick(), MapID: int32(r.IntN(n)), Kind: locksteptest.KindAdd, Payload: []byte{byte(r.IntN(256))}}
			if err := sim.Apply(cmd); err != nil {
				t.Fatal(err)
			}
		}
		sim.Step()
	}
	return sim
}

func cutPoint(t testing.TB, sim lockstep.Sim, level int) *Point {
	raw, err := Cut(sim)
	if err != nil {
		t.Fatal(err)
	}
	p, err := raw.Compress(Compression{Level: level})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// joinCommands is what a joiner receives besides the state: commands
// stamped at and after the join point.
func joinCommands(tick uint64) []MapCommands {
	return []MapCommands{
		{MapID: lockstep.WorldScope, Commands: []lockstep.Command{
			{Tick: tick, Seq: 1, MapID: lockstep.WorldScope, Kind: lockstep.KindSetSpeed, Player: 2, Payload: []byte{0}},
		}},
		{MapID: 0, Commands: []lockstep.Command{
			{Tick: tick, Seq: 0, MapID: 0, Kind: locksteptest.KindAdd, Player: 1, Payload: []byte{5}},
			{Tick: tick + 3, Seq: 0, MapID: 0, Kind: locksteptest.KindAdd, Player: 1, Payload: []byte{0xfe}},
		}},
		{MapID: 2, Commands: []lockstep.Command{
			{Tick: tick + 1, Seq: 0, MapID: 2, Kind: locksteptest.KindAdd, Player: 3, Payload: []byte{1}},
		}},
	}
}

// assemble feeds pl to a fresh receiver in chunks of size bytes and returns
// the chunks joined.
func assemble(t testing.TB, pl *Payload, size int) []byte {
	t.Helper()
	a := NewReceiver(pl.Total(), func(int, Blob) error { return nil })
	var buf []byte
	var off uint64
	for {
		chunk := pl.Chunk(off, size)
		if len(chunk) == 0 {
			t.Fatalf("empty chunk at %d of %d", off, pl.Total())
		}
		if len(chunk) > size {
			t.Fatalf("chunk of %d bytes for size %d", len(chunk), size)
		}
		if size <= wire.MaxChunkData {
			pkt := &wire.ServerWorldData{Offset: off, Total: pl.Total(), Data: chunk}
			if err := pkt.Validate(); err != nil {
				t.Fatalf("chunk at %d does not make a valid packet: %v", off, err)
			}
		}
		done, err := a.Add(off, pl.Total(), chunk)
		if err != nil {
			t.Fatalf("Add at %d: %v", off, err)
		}
		buf = append(buf, chunk...)
		off += uint64(len(chunk))
		if a.Received() != off {
			t.Fatalf("Received %d after %d bytes", a.Received(), off)
		}
		if done != (off == pl.Total()) {
			t.Fatalf("done=%v at %d of %d", done, off, pl.Total())
		}
		if done {
			break
		}
	}
	if rest := pl.Chunk(off, size); rest != nil {
		t.Fatalf("Chunk past the end returned %d bytes", len(rest))
	}
	return buf
}

func checkJoin(t *testing.T, b []byte, sim *locksteptest.Counters, p *Point, faction int32, granted uint64, cmds []MapCommands) {
	t.Helper()
	parsed, err := Parse(b)
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	h := parsed.Header
	if h.Faction != faction || h.Tick != sim.Tick() || h.Granted != granted || h.WorldHash != sim.WorldHash() {
		t.Fatalf("header faction %d tick %d granted %d hash %x; want %d %d %d %x",
			h.Faction, h.Tick, h.Granted, h.WorldHash, faction, sim.Tick(), granted, sim.WorldHash())
	}
	if !reflect.DeepEqual(h.Commands, cmds) {
		t.Fatalf("commands:\n got %+v\nwant %+v", h.Commands, cmds)
	}
	if len(h.Maps) != len(p.Maps) || len(parsed.Maps) != len(p.Maps) {
		t.Fatalf("%d maps in header, %d blobs, want %d", len(h.Maps), len(parsed.Maps), len(p.Maps))
	}
	if !bytes.Equal(parsed.World.Data, p.World.Data) {
		t.Fatal("world blob differs")
	}
	for i, m := range p.Maps {
		if h.Maps[i].ID != m.ID || !bytes.Equal(parsed.Maps[i].Data, m.Blob.Data) {
			t.Fatalf("map %d differs", i)
		}
	}
	loaded, err := parsed.Load(locksteptest.Load, Limits{MaxRaw: 16 << 20})
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if loaded.Tick() != sim.Tick() || loaded.WorldHash() != sim.WorldHash() {
		t.Fatalf("loaded tick %d hash %x, want %d %x", loaded.Tick(), loaded.WorldHash(), sim.Tick(), sim.WorldHash())
	}
	if !slices.Equal(loaded.MapIDs(), sim.MapIDs()) {
		t.Fatalf("loaded maps %v, want %v", loaded.MapIDs(), sim.MapIDs())
	}
	for _, id := range sim.MapIDs() {
		want, _ := sim.MapHash(id)
		if got, ok := loaded.MapHash(id); !ok || got != want {
			t.Fatalf("map %d hash %x, want %x", id, got, want)
		}
	}
	// The loaded world goes on exactly like the original.
	loaded.Step()
	sim2, _ := locksteptest.Load(mustWorld(t, sim), mustMaps(t, sim))
	sim2.Step()
	if loaded.WorldHash() != sim2.WorldHash() {
		t.Fatal("loaded world diverges after one step")
	}
}

func mustWorld(t testing.TB, s lockstep.Sim) []byte {
	b, err := s.MarshalWorld()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func mustMaps(t testing.TB, s lockstep.Sim) []lockstep.MapBlob {
	var out []lockstep.MapBlob
	for _, id := range s.MapIDs() {
		b, err := s.MarshalMap(id)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, lockstep.MapBlob{ID: id, Data: b})
	}
	return out
}

func TestPayloadChunkedRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name  string
		maps  int
		size  int
		level int
		sizes []int
	}{
		// Small and compressed: every chunk size, many segment crossings.
		{"small", 3, 2000, DefaultLevel, []int{1, 7, 4096, wire.MaxChunkData}},
		// Barely compressed, larger than two chunks: full-size chunks, and an odd
		// size whose chunks straddle every blob boundary.
		{"large", 3, 1_500_000, gzip.HuffmanOnly, []int{1, 7, 4096, 100_003, wire.MaxChunkData}},
	} {
		sim := runSim(t, tc.maps, tc.size, 200)
		p := cutPoint(t, sim, tc.level)
		cmds := joinCommands(sim.Tick())
		const faction = 7
		granted := sim.Tick() + 5
		pl, err := NewPayload(p, faction, granted, cmds)
		if err != nil {
			t.Fatal(err)
		}
		if pl.Total() < p.CompressedSize()+4 {
			t.Fatalf("%s: total %d smaller than the blobs (%d)", tc.name, pl.Total(), p.CompressedSize())
		}
		if tc.name == "large" && pl.Total() <= 2*wire.MaxChunkData {
			t.Fatalf("large payload is only %d bytes", pl.Total())
		}
		var first []byte
		for _, size := range tc.sizes {
			t.Run(tc.name+"/"+strconv.Itoa(size), func(t *testing.T) {
				b := assemble(t, pl, size)
				if first == nil {
					first = bytes.Clone(b)
				} else if !bytes.Equal(b, first) {
					t.Fatal("chunk size changed the reassembled payload")
				}
				checkJoin(t, b, sim, p, faction, granted, cmds)
			})
		}
	}
}

func TestPayloadChunkEdges(t *testing.T) {
	sim := runSim(t, 2, 100, 10)
	pl, err := NewPayload(cutPoint(t, sim, DefaultLevel), 1, sim.Tick(), nil)
	if err != nil {
		t.Fatal(err)
	}
	total := pl.Total()
	whole := pl.Bytes()
	if uint64(len(whole)) != total {
		t.Fatalf("Bytes gave %d of %d bytes", len(whole), total)
	}
	// A chunk never crosses a part boundary: the first one ends with the
	// header, the next starts the world blob.
	head := pl.Chunk(0, int(total)+100)
	if n := uint64(binary.BigEndian.Uint32(whole)) + prefixSize; uint64(len(head)) != n {
		t.Fatalf("Chunk(0, total+100) gave %d bytes, want the %d of the prefix and header", len(head), n)
	}
	for _, tc := range []struct {
		off  uint64
		max  int
		want int
	}{
		{0, 0, 0},
		{0, -1, 0},
		{total, 10, 0},
		{total + 1, 10, 0},
		{total - 1, 10, 1},
		{3, 2, 2},
		{2, 10, 10},
	} {
		got := pl.Chunk(tc.off, tc.max)
		if len(got) != tc.want {
			t.Errorf("Chunk(%d, %d) gave %d bytes, want %d", tc.off, tc.max, len(got), tc.want)
			continue
		}
		if tc.want > 0 && !bytes.Equal(got, whole[tc.off:tc.off+uint64(tc.want)]) {
			t.Errorf("Chunk(%d, %d) bytes differ", tc.off, tc.max)
		}
	}
	if n := binary.BigEndian.Uint32(whole); uint64(n)+4 > total {
		t.Fatalf("header length %d in a %d-byte payload", n, total)
	}
}

func TestNewPayloadRefusesGrantBeforePoint(t *testing.T) {
	sim := runSim(t, 1, 10, 10)
	if _, err := NewPayload(cutPoint(t, sim, DefaultLevel), 1, sim.Tick()-1, nil); err == nil {
		t.Fatal("grant before the join point accepted")
	}
}

func TestReceiverChunkErrors(t *testing.T) {
	sim := runSim(t, 2, 300, 10)
	pl, err := NewPayload(cutPoint(t, sim, DefaultLevel), 1, sim.Tick(), nil)
	if err != nil {
		t.Fatal(err)
	}
	data := bytes.Clone(pl.Bytes())
	total := pl.Total()
	nop := func(int, Blob) error { return nil }

	t.Run("total over limit", func(t *testing.T) {
		for _, tot := range []uint64{total + 1, 1 << 62} {
			r := NewReceiver(total, nop)
			var err error
			alloc := allocated(func() { _, err = r.Add(0, tot, data[:10]) })
			if !errors.Is(err, ErrTooLarge) {
				t.Fatalf("total %d: %v, want ErrTooLarge", tot, err)
			}
			if r.Received() != 0 || r.Total() != 0 {
				t.Fatalf("refused payload left %d bytes, total %d", r.Received(), r.Total())
			}
			if alloc > 64<<10 {
				t.Fatalf("refusing a payload of %d bytes allocated %d bytes", tot, alloc)
			}
		}
		// The limit itself is fine.
		if done, err := NewReceiver(total, nop).Add(0, total, data); err != nil || !done {
			t.Fatalf("payload of exactly the limit: %v", err)
		}
	})

	t.Run("too small", func(t *testing.T) {
		for tot := uint64(0); tot < prefixSize; tot++ {
			if _, err := NewReceiver(100, nop).Add(0, tot, data[:tot]); !errors.Is(err, ErrMalformed) {
				t.Fatalf("total %d: %v, want ErrMalformed", tot, err)
			}
		}
	})

	t.Run("out of order", func(t *testing.T) {
		if _, err := NewReceiver(total, nop).Add(10, total, data[10:20]); !errors.Is(err, ErrOutOfOrder) {
			t.Fatalf("first chunk at 10: %v, want ErrOutOfOrder", err)
		}
		r := NewReceiver(total, nop)
		if _, err := r.Add(0, total, data[:10]); err != nil {
			t.Fatal(err)
		}
		for _, off := range []uint64{0, 9, 11, total} {
			if _, err := r.Add(off, total, data[:1]); !errors.Is(err, ErrOutOfOrder) {
				t.Fatalf("chunk at %d after 10 bytes: %v, want ErrOutOfOrder", off, err)
			}
		}
		if r.Received() != 10 {
			t.Fatalf("refused chunks were kept: %d bytes", r.Received())
		}
		if done, err := r.Add(10, total, data[10:]); err != nil || !done {
			t.Fatalf("the right chunk after refusals: done=%v %v", done, err)
		}
	})

	t.Run("past total", func(t *testing.T) {
		long := append(bytes.Clone(data), 0)
		if _, err := NewReceiver(total+1, nop).Add(0, total, long); !errors.Is(err, ErrMalformed) {
			t.Fatalf("first chunk past total: %v, want ErrMalformed", err)
		}
	})

	t.Run("changing total", func(t *testing.T) {
		r := NewReceiver(1<<41, nop)
		if _, err := r.Add(0, total, data[:10]); err != nil {
			t.Fatal(err)
		}
		for _, tot := range []uint64{total - 1, total + 1, 1 << 40} {
			if _, err := r.Add(10, tot, data[10:20]); !errors.Is(err, ErrMalformed) {
				t.Fatalf("total %d after %d: %v, want ErrMalformed", tot, total, err)
			}
		}
		if r.Total() != total || r.Received() != 10 {
			t.Fatalf("total %d received %d after refusals", r.Total(), r.Received())
		}
	})
}

// allocated is how many bytes f allocated.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// buildPayload lays out a payload by hand. hdrLen overrides the length
// field when non-negative.
func buildPayload(t testing.TB, h Header, hdrLen int, blobs ...[]byte) []byte {
	hb, err := codec.Encode(&h)
	if err != nil {
		t.Fatal(err)
	}
	n := uint32(len(hb))
	if hdrLen >= 0 {
		n = uint32(hdrLen)
	}
	b := binary.BigEndian.AppendUint32(nil, n)
	b = binary.BigEndian.AppendUint64(b, xxhash.Sum64(hb))
	b = append(b, hb...)
	for _, blob := range blobs {
		b = append(b, blob...)
	}
	return b
}

func TestParseErrors(t *testing.T) {
	sim := runSim(t, 2, 300, 30)
	p := cutPoint(t, sim, DefaultLevel)
	pl, err := NewPayload(p, 3, sim.Tick(), joinCommands(sim.Tick()))
	if err != nil {
		t.Fatal(err)
	}
	valid := pl.Bytes()
	if _, err := Parse(valid); err != nil {
		t.Fatalf("valid payload: %v", err)
	}

	t.Run("every truncation", func(t *testing.T) {
		for n := 0; n < len(valid); n++ {
			if _, err := Parse(valid[:n]); !errors.Is(err, ErrMalformed) {
				t.Fatalf("payload cut to %d of %d bytes: %v, want ErrMalformed", n, len(valid), err)
			}
		}
	})

	good, err := Parse(valid)
	if err != nil {
		t.Fatal(err)
	}
	h := good.Header
	blobs := [][]byte{p.World.Data, p.Maps[0].Blob.Data, p.Maps[1].Blob.Data}
	if got := buildPayload(t, h, -1, blobs...); !bytes.Equal(got, valid) {
		t.Fatal("hand-built payload differs from NewPayload's")
	}
	hb, _ := codec.Encode(&h)

	for _, tc := range []struct {
		name string
		b    []byte
	}{
		{"header length past the end", buildPayload(t, h, len(valid), blobs...)},
		{"header length max", buildPayload(t, h, 0xffffffff, blobs...)},
		{"header length one short", buildPayload(t, h, len(hb)-1, blobs...)},
		{"header length one long", buildPayload(t, h, len(hb)+1, blobs...)},
		{"header length zero", buildPayload(t, h, 0, blobs...)},
		{"world size too big", buildPayload(t, withWorldSize(h, h.World.Size+1), -1, blobs...)},
		{"world size too small", buildPayload(t, withWorldSize(h, h.World.Size-1), -1, blobs...)},
		{"map size too big", buildPayload(t, withMapSize(h, 1, h.Maps[1].Blob.Size+1), -1, blobs...)},
		{"map size huge", buildPayload(t, withMapSize(h, 0, 1<<63), -1, blobs...)},
		{"map missing", buildPayload(t, h, -1, blobs[:2]...)},
		{"trailing byte", append(bytes.Clone(valid), 0)},
		{"extra blob", buildPayload(t, h, -1, append(blobs, []byte("extra"))...)},
		{"header not msgpack", append(binary.BigEndian.AppendUint32(nil, 3), 0xc1, 0xc1, 0xc1)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := Parse(tc.b); err == nil {
				t.Fatal("Parse accepted it")
			}
		})
	}
	// Blob sizes that do not add up are reported as malformed.
	for _, b := range [][]byte{
		buildPayload(t, withWorldSize(h, h.World.Size-1), -1, blobs...),
		buildPayload(t, withMapSize(h, 1, h.Maps[1].Blob.Size+1), -1, blobs...),
		append(bytes.Clone(valid), 0),
	} {
		if _, err := Parse(b); !errors.Is(err, ErrMalformed) {
			t.Errorf("sizes not adding up: %v, want ErrMalformed", err)
		}
	}
}

func withWorldSize(h Header, size uint64) Header {
	h.World.Size = size
	return h
}

func withMapSize(h Header, i int, size uint64) Header {
	h.Maps = slices.Clone(h.Maps)
	h.Maps[i].Blob.Size = size
	return h
}

func TestLoadVerifiesState(t *testing.T) {
	sim := runSim(t, 3, 500, 40)
	p := cutPoint(t, sim, DefaultLevel)

	load := func(p *Point, lim Limits) error {
		_, err := parsedOf(t, p).Load(locksteptest.Load, lim)
		return err
	}
	if err := load(p, Limits{}); err != nil {
		t.Fatalf("untouched point: %v", err)
	}

	badMap := *p
	badMap.Maps = slices.Clone(p.Maps)
	badMap.Maps[1].StateHash ^= 1
	if err := load(&badMap, Limits{}); err == nil {
		t.Error("map state hash mismatch not detected")
	}

	badWorld := *p
	badWorld.WorldHash ^= 1
	if err := load(&badWorld, Limits{}); err == nil {
		t.Error("world state hash mismatch not detected")
	}

	badTick := *p
	badTick.Tick++
	if err := load(&badTick, Limits{}); err == nil {
		t.Error("tick mismatch not detected")
	}

	tampered := *p
	tampered.Maps = slices.Clone(p.Maps)
	tampered.Maps[2].Blob.Data = bytes.Clone(p.Maps[2].Blob.Data)
	tampered.Maps[2].Blob.Data[20] ^= 1
	if err := load(&tampered, Limits{}); !errors.Is(err, ErrHashMismatch) {
		t.Errorf("tampered map blob: %v, want ErrHashMismatch", err)
	}

	if err := load(p, Limits{MaxRaw: int64(p.Maps[0].Blob.RawSize) - 1}); !errors.Is(err, ErrTooLarge) {
		t.Errorf("map over MaxRaw: %v, want ErrTooLarge", err)
	}

	// A blob that inflates fine but that the game cannot load.
	junk, err := Compress([]byte("not a counters world"), Compression{})
	if err != nil {
		t.Fatal(err)
	}
	badState := *p
	badState.World = junk
	if err := load(&badState, Limits{}); err == nil {
		t.Error("unloadable world state accepted")
	}

	// Maps swapped: each blob is intact, but the loaded map IDs disagree
	// with the header.
	swapped := *p
	swapped.Maps = slices.Clone(p.Maps)
	swapped.Maps[0].Blob, swapped.Maps[1].Blob = swapped.Maps[1].Blob, swapped.Maps[0].Blob
	if err := load(&swapped, Limits{}); err == nil {
		t.Error("swapped map blobs accepted")
	}
}

func TestPointSizes(t *testing.T) {
	sim := runSim(t, 2, 1000, 5)
	p := cutPoint(t, sim, DefaultLevel)
	wantRaw := uint64(len(mustWorld(t, sim)))
	wantComp := uint64(len(p.World.Data))
	for _, m := range mustMaps(t, sim) {
		wantRaw += uint64(len(m.Data))
	}
	for _, m := range p.Maps {
		wantComp += uint64(len(m.Blob.Data))
	}
	if p.RawSize() != wantRaw || p.CompressedSize() != wantComp {
		t.Fatalf("RawSize %d CompressedSize %d, want %d %d", p.RawSize(), p.CompressedSize(), wantRaw, wantComp)
	}
	if p.Tick != sim.Tick() || p.WorldHash != sim.WorldHash() || len(p.Maps) != 2 {
		t.Fatalf("point tick %d hash %x maps %d", p.Tick, p.WorldHash, len(p.Maps))
	}
	for i, m := range p.Maps {
		h, _ := sim.MapHash(m.ID)
		if m.ID != int32(i) || m.StateHash != h {
			t.Fatalf("map %d: id %d hash %x, want %x", i, m.ID, m.StateHash, h)
		}
	}
}
