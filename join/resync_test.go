package join

import (
	"errors"
	"testing"

	"github.com/lockhost/lockhost/lockstep"
	"github.com/lockhost/lockhost/lockstep/locksteptest"
	"github.com/lockhost/lockhost/snapshot"
	"github.com/lockhost/lockhost/wire"
)

// repairPayload is the repair the host sends of src's maps ids (all of
// them when full).
func repairPayload(t *testing.T, src lockstep.Sim, ids []int32) []byte {
	t.Helper()
	raw, err := snapshot.CutMaps(src, ids)
	if err != nil {
		t.Fatal(err)
	}
	p, err := raw.Compress(snapshot.Compression{})
	if err != nil {
		t.Fatal(err)
	}
	pl, err := snapshot.NewPayload(p, 0, p.Tick, nil)
	if err != nil {
		t.Fatal(err)
	}
	return pl.Bytes()
}

// receiveRepair runs a repair of b on a session following sim, as the
// session does between Server_Resync and the swap: announced, received
// in chunks, swapped in at the hold point. It returns the simulation the
// session follows afterwards and where it stopped.
func receiveRepair(cfg Config, sim lockstep.Sim, msg *wire.ServerResync, b []byte) (lockstep.Sim, string, error) {
	fol, err := lockstep.NewFollower(sim, nil)
	if err != nil {
		return nil, "follower", err
	}
	s := &Session{cfg: cfg.Defaults(), follower: fol}
	if err := s.startResync(msg); err != nil {
		return nil, "announce", err
	}
	const chunk = 1500
	for off := 0; off < len(b); off += chunk {
		d := &wire.ServerWorldData{Offset: uint64(off), Total: uint64(len(b)), Data: b[off:min(off+chunk, len(b))]}
		if err := s.resyncData(d); err != nil {
			return nil, "receive", err
		}
	}
	if !s.resync.done || !fol.Held() {
		return nil, "receive", errors.New("repair not complete at the hold point")
	}
	err = s.swapIn(s.resync, s.resync.recv.Header())
	return fol.Sim(), "swap", err
}

// TestRepairLimits: a full repair and a repair of single maps go in and
// leave the client's state equal to the host's; a blob declaring more
// than MaxRaw is refused as it arrives, and a repair over MaxRawTotal in
// all when it is inflated at the swap.
func TestRepairLimits(t *testing.T) {
	host := locksteptest.New(3, 2<<10)
	for i := range 3 {
		if err := host.Apply(locksteptest.Counters{}.AddCommand(int32(i), int8(3*i+1))); err != nil {
			t.Fatal(err)
		}
	}
	host.Step()
	all := host.MapIDs()
	full := repairPayload(t, host, all)
	maps := repairPayload(t, host, []int32{0, 2})
	fullHdr, err := snapshot.Parse(full)
	if err != nil {
		t.Fatal(err)
	}
	mapsHdr, err := snapshot.Parse(maps)
	if err != nil {
		t.Fatal(err)
	}
	fullMsg := &wire.ServerResync{Tick: host.Tick(), Maps: all, Full: true}
	mapsMsg := &wire.ServerResync{Tick: host.Tick(), Maps: []int32{0, 2}}
	mapsRaw := mapsHdr.Header.Maps[0].Blob.RawSize + mapsHdr.Header.Maps[1].Blob.RawSize
	for _, tc := range []struct {
		name      string
		cfg       Config
		msg       *wire.ServerResync
		b         []byte
		wantStage string // "" for success
	}{
		{"full, loader", Config{Loader: locksteptest.Load}, fullMsg, full, ""},
		{"full, map loader", Config{MapLoader: locksteptest.MapLoader}, fullMsg, full, ""},
		{"maps", Config{Loader: locksteptest.Load}, mapsMsg, maps, ""},
		{"full, blob over MaxRaw", Config{Loader: locksteptest.Load, MaxRaw: int64(fullHdr.Header.World.RawSize) - 1}, fullMsg, full, "receive"},
		{"full, over MaxRawTotal", Config{Loader: locksteptest.Load, MaxRawTotal: fullHdr.Header.RawSize() - 1}, fullMsg, full, "swap"},
		{"full, at MaxRawTotal", Config{MapLoader: locksteptest.MapLoader, MaxRawTotal: fullHdr.Header.RawSize()}, fullMsg, full, ""},
		{"maps, over MaxRawTotal", Config{Loader: locksteptest.Load, MaxRawTotal: mapsRaw - 1}, mapsMsg, maps, "swap"},
		{"maps, at MaxRawTotal", Config{Loader: locksteptest.Load, MaxRawTotal: mapsRaw}, mapsMsg, maps, ""},
	} {
		client := host.Clone().(*locksteptest.Counters)
		for _, id := range tc.msg.Maps {
			if err := client.Perturb(id); err != nil {
				t.Fatal(err)
			}
		}
		if client.WorldHash() == host.WorldHash() {
			t.Fatalf("%s: perturbing did not change the client's state", tc.name)
		}
		got, stage, err := receiveRepair(tc.cfg, client, tc.msg, tc.b)
		if tc.wantStage != "" {
			if stage != tc.wantStage || !errors.Is(err, snapshot.ErrTooLarge) {
				t.Errorf("%s: refused at %s with %v, want ErrTooLarge at %s", tc.name, stage, err, tc.wantStage)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %s: %v", tc.name, stage, err)
		} else if got.WorldHash() != host.WorldHash() {
			t.Errorf("%s: repaired world hash %x, host's %x", tc.name, got.WorldHash(), host.WorldHash())
		}
	}
}
