package saves

import (
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cespare/xxhash/v2"

	"github.com/lockhost/lockhost/internal/codec"
	"github.com/lockhost/lockhost/lockstep"
)

// atTick rewrites the valid save at path, which holds no commands, as
// the same save at tick: the meta's tick, the body's tick and grant, the
// header's hash and the checksum, each as Write lays them out. What
// Write would refuse to make, a hand may.
func atTick(t *testing.T, path string, tick uint64) {
	t.Helper()
	b, l := layoutOf(t, path)
	f, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	meta, h := f.Meta, f.Header
	meta.Tick, h.Tick, h.Granted = tick, tick, tick
	mb, err := codec.Encode(&meta)
	if err != nil {
		t.Fatal(err)
	}
	hb, err := codec.Encode(&h)
	if err != nil {
		t.Fatal(err)
	}
	blobs := b[l.hdrEnd : len(b)-sumLen]
	total := prefixLen + len(mb) + payloadPrefix + len(hb) + len(blobs) + sumLen
	out := append([]byte(nil), b[:offMetaLen-8]...) // magic, version, flags
	out = binary.BigEndian.AppendUint64(out, uint64(total))
	out = binary.BigEndian.AppendUint32(out, uint32(len(mb)))
	out = append(out, mb...)
	out = binary.BigEndian.AppendUint32(out, uint32(len(hb)))
	out = binary.BigEndian.AppendUint64(out, xxhash.Sum64(hb))
	out = append(append(out, hb...), blobs...)
	out = binary.BigEndian.AppendUint64(out, xxhash.Sum64(out))
	if err := os.WriteFile(path, out, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestTickPastMaxTickRefused: a save at a tick a session could never
// reach (2^64-301: a host's clock would wrap to 0 five seconds after
// loading it) is refused when read, whole or its header alone, saying
// why; the same save at lockstep.MaxTick is read.
func TestTickPastMaxTickRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.lhsave")
	newSession(t, 2, 16, 0, 0).write(t, path)
	atTick(t, path, lockstep.MaxTick)
	if _, err := Read(path); err != nil {
		t.Fatalf("a save at lockstep.MaxTick: %v", err)
	}
	atTick(t, path, math.MaxUint64-300)
	for name, read := range map[string]func(string) (*File, error){"Read": Read, "ReadHeader": ReadHeader} {
		if _, err := read(path); err == nil || !strings.Contains(err.Error(), "past the last tick a session reaches") {
			t.Errorf("%s of a save at tick 2^64-301: %v, want refused for its tick", name, err)
		}
	}
}
