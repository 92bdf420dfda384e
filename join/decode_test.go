package join

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/lockhost/lockhost/lockstep"
	"github.com/lockhost/lockhost/lockstep/locksteptest"
	"github.com/lockhost/lockhost/snapshot"
)

// testPayload is the join payload of a small Counters world with n maps.
func testPayload(t *testing.T, n int) (lockstep.Sim, *snapshot.Payload) {
	t.Helper()
	sim := locksteptest.New(n, 4<<10)
	for i := range n {
		if err := sim.Apply(locksteptest.Counters{}.AddCommand(int32(i), int8(i+1))); err != nil {
			t.Fatal(err)
		}
	}
	sim.Step()
	point, err := snapshot.Build(sim, snapshot.BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pl, err := snapshot.NewPayload(point, 1, sim.Tick(), nil)
	if err != nil {
		t.Fatal(err)
	}
	return sim, pl
}

// decodeAll feeds b to a receiver with a decoder of cfg in chunks of size
// bytes, as the download does, and returns what the decoder loads.
func decodeAll(cfg Config, b []byte, size int) (lockstep.Sim, error) {
	cfg = cfg.Defaults()
	var dec *decoder
	defer func() {
		if dec != nil {
			dec.stop()
		}
	}()
	recv := snapshot.NewReceiver(uint64(len(b)), func(i int, bl snapshot.Blob) error { return dec.blob(i, bl) })
	recv.OnHeader(func(h *snapshot.Header) error { dec = newDecoder(cfg, h); return nil })
	for off := 0; off < len(b); off += size {
		if _, err := recv.Add(uint64(off), uint64(len(b)), b[off:min(off+size, len(b))]); err != nil {
			return nil, err
		}
	}
	if dec == nil {
		return nil, errors.New("no header")
	}
	return dec.finish()
}

// TestDecoder: the download's decoder loads a world with either kind of
// loader, refuses declared sizes over the limits before inflating, and
// reports a damaged blob.
func TestDecoder(t *testing.T) {
	sim, pl := testPayload(t, 5)
	good := pl.Bytes()
	parsed, err := snapshot.Parse(good)
	if err != nil {
		t.Fatal(err)
	}
	h := parsed.Header
	damaged := bytes.Clone(good)
	damaged[len(damaged)-10] ^= 1 // inside the last map's blob
	for _, tc := range []struct {
		name string
		cfg  Config
		b    []byte
		want string // "" for success
	}{
		{"loader", Config{Loader: locksteptest.Load}, good, ""},
		{"map loader", Config{MapLoader: locksteptest.MapLoader}, good, ""},
		{"blob over MaxRaw", Config{Loader: locksteptest.Load, MaxRaw: int64(h.Maps[0].Blob.RawSize) - 1}, good, "declares"},
		{"world over MaxRawTotal", Config{MapLoader: locksteptest.MapLoader, MaxRawTotal: h.RawSize() - 1}, good, "world declares"},
		{"total at MaxRawTotal", Config{MapLoader: locksteptest.MapLoader, MaxRawTotal: h.RawSize()}, good, ""},
		{"damaged blob, loader", Config{Loader: locksteptest.Load}, damaged, "hash mismatch"},
		{"damaged blob, map loader", Config{MapLoader: locksteptest.MapLoader}, damaged, "hash mismatch"},
	} {
		for _, size := range []int{1000, len(good)} {
			got, err := decodeAll(tc.cfg, tc.b, size)
			if tc.want != "" {
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Errorf("%s, chunks of %d: %v, want an error with %q", tc.name, size, err, tc.want)
				}
				if strings.Contains(tc.want, "declares") && !errors.Is(err, snapshot.ErrTooLarge) {
					t.Errorf("%s: %v is not ErrTooLarge", tc.name, err)
				}
				continue
			}
			if err != nil {
				t.Errorf("%s, chunks of %d: %v", tc.name, size, err)
				continue
			}
			if got.Tick() != sim.Tick() || got.WorldHash() != sim.WorldHash() {
				t.Errorf("%s: loaded tick %d hash %x, want %d %x", tc.name, got.Tick(), got.WorldHash(), sim.Tick(), sim.WorldHash())
			}
		}
	}
}
