package relay

import (
	"errors"
	"strings"
	"testing"

	"github.com/lockhost/lockhost/lockstep"
	"github.com/lockhost/lockhost/lockstep/locksteptest"
	"github.com/lockhost/lockhost/snapshot"
	"github.com/lockhost/lockhost/wire"
)

// testPoint is a small world of maps maps at tick, compressed with gzip.
func testPoint(t testing.TB, maps int, tick uint64) *snapshot.Point {
	t.Helper()
	sim := locksteptest.New(maps, 64)
	for sim.Tick() < tick {
		sim.Step()
	}
	pt, err := snapshot.Build(sim, snapshot.BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return pt
}

// payloadOf lays pt out as a payload with the given header values.
func payloadOf(t testing.TB, pt *snapshot.Point, faction int32, granted uint64, cmds []snapshot.MapCommands) []byte {
	t.Helper()
	pl, err := snapshot.NewPayload(pt, faction, granted, cmds)
	if err != nil {
		t.Fatal(err)
	}
	return pl.Bytes()
}

// send feeds b to u in chunks of size n, as an arbiter would.
func send(u *Upload, b []byte, n int) (bool, error) {
	q := u.Request().Request
	for off := 0; off < len(b); off += n {
		end := min(off+n, len(b))
		done, err := u.Add(&wire.ClientUpload{Request: q, Offset: uint64(off), Total: uint64(len(b)), Data: b[off:end]})
		if err != nil || done {
			return done, err
		}
	}
	return false, nil
}

func TestUpload(t *testing.T) {
	pt := testPoint(t, 3, 600)
	good := payloadOf(t, pt, 0, 600, nil)
	req := wire.ServerUploadRequest{Request: 2, Kind: wire.UploadJoinPoint, Tick: 600, Limit: 1 << 20}
	flip := func(b []byte, at int) []byte {
		c := append([]byte(nil), b...)
		c[at] ^= 0xff
		return c
	}
	badCodec := *pt
	badCodec.Maps = append([]snapshot.MapPoint(nil), pt.Maps...)
	badCodec.Maps[1].Blob.Codec = 7
	maps := func(ids ...int32) wire.ServerUploadRequest {
		return wire.ServerUploadRequest{Request: 2, Kind: wire.UploadMaps, Tick: 600, Maps: ids, Limit: 1 << 20}
	}
	for _, tc := range []struct {
		name    string
		req     wire.ServerUploadRequest
		payload []byte
		chunk   int
		want    string // "" accepted; else part of the error
		chunkEr bool   // a protocol error (ErrChunk)
	}{
		{"join point", req, good, 1 << 10, "", false},
		{"in one chunk", req, good, len(good), "", false},
		{"a byte a chunk", req, good, 1, "", false},
		{"world at any tick", wire.ServerUploadRequest{Request: 2, Kind: wire.UploadWorld, Limit: 1 << 20}, good, 100, "", false},
		{"maps in the request's order", maps(0, 1, 2), good, 100, "", false},
		{"other maps", maps(2, 1, 0), good, 100, "the request asked for", false},
		{"wrong tick", wire.ServerUploadRequest{Request: 2, Kind: wire.UploadJoinPoint, Tick: 660, Limit: 1 << 20}, good, 100, "the request's 660", false},
		{"a faction", req, payloadOf(t, pt, 1, 600, nil), 100, "faction is 1", false},
		{"a grant past the tick", req, payloadOf(t, pt, 0, 601, nil), 100, "grant 601", false},
		{"commands", req, payloadOf(t, pt, 0, 600, []snapshot.MapCommands{{MapID: 0, Commands: []lockstep.Command{{Tick: 600, Kind: 1}}}}), 100, "carries commands", false},
		{"a blob's byte changed", req, flip(good, len(good)-10), 100, "hash", false},
		{"the header's byte changed", req, flip(good, 20), 100, "header hash", false},
		{"unknown codec", req, payloadOf(t, &badCodec, 0, 600, nil), 100, "codec 7", false},
		{"over the limit", wire.ServerUploadRequest{Request: 2, Kind: wire.UploadJoinPoint, Tick: 600, Limit: uint64(len(good) - 1)}, good, 100, "over the request's limit", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u := NewUpload(tc.req)
			done, err := send(u, tc.payload, tc.chunk)
			if tc.want == "" {
				if err != nil || !done {
					t.Fatalf("done %v, %v; want the upload taken", done, err)
				}
				got := u.Point()
				if got.Tick != pt.Tick || got.WorldHash != pt.WorldHash || len(got.Maps) != len(pt.Maps) ||
					string(got.World.Data) != string(pt.World.Data) {
					t.Fatalf("the point differs from the one uploaded")
				}
				for i := range got.Maps {
					if got.Maps[i].ID != pt.Maps[i].ID || got.Maps[i].StateHash != pt.Maps[i].StateHash ||
						string(got.Maps[i].Blob.Data) != string(pt.Maps[i].Blob.Data) {
						t.Fatalf("map %d differs from the one uploaded", i)
					}
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("done %v, err %v; want an error with %q", done, err, tc.want)
			}
			if errors.Is(err, ErrChunk) != tc.chunkEr {
				t.Fatalf("%v: a chunk error %v, want %v", err, errors.Is(err, ErrChunk), tc.chunkEr)
			}
		})
	}
}

// TestUploadChunkRules checks the chunk rules of Client_Upload: order,
// one total, one request.
func TestUploadChunkRules(t *testing.T) {
	pt := testPoint(t, 1, 0)
	b := payloadOf(t, pt, 0, 0, nil)
	req := wire.ServerUploadRequest{Request: 5, Kind: wire.UploadWorld, Limit: 1 << 20}
	for _, tc := range []struct {
		name string
		next wire.ClientUpload
	}{
		{"a gap", wire.ClientUpload{Request: 5, Offset: 11, Total: uint64(len(b)), Data: b[11:20]}},
		{"a repeat", wire.ClientUpload{Request: 5, Offset: 0, Total: uint64(len(b)), Data: b[:10]}},
		{"another total", wire.ClientUpload{Request: 5, Offset: 10, Total: uint64(len(b) + 1), Data: b[10:20]}},
		{"another request", wire.ClientUpload{Request: 6, Offset: 10, Total: uint64(len(b)), Data: b[10:20]}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u := NewUpload(req)
			if _, err := u.Add(&wire.ClientUpload{Request: 5, Total: uint64(len(b)), Data: b[:10]}); err != nil {
				t.Fatal(err)
			}
			if _, err := u.Add(&tc.next); !errors.Is(err, ErrChunk) {
				t.Fatalf("%v, want ErrChunk", err)
			}
		})
	}
}

// TestUploadRawLimit: an upload whose blobs declare more raw bytes in all
// than its raw limit is refused (content, not a chunk rule) as soon as
// its header is complete, before any blob arrives; one within it is taken.
func TestUploadRawLimit(t *testing.T) {
	pt := testPoint(t, 2, 60)
	req := wire.ServerUploadRequest{Request: 1, Kind: wire.UploadJoinPoint, Tick: 60, Limit: wire.DefaultUploadLimit}
	within := payloadOf(t, pt, 0, 60, nil)
	if done, err := send(NewUpload(req).LimitRaw(pt.RawSize()), within, 1<<20); !done || err != nil {
		t.Fatalf("an upload at its raw limit: done %v, %v", done, err)
	}
	pt.World.RawSize = 2 << 30 // a claim: nothing is inflated to check it
	over := payloadOf(t, pt, 0, 60, nil)
	headerEnd := len(over) - int(pt.CompressedSize())
	u := NewUpload(req).LimitRaw(1 << 30)
	done, err := u.Add(&wire.ClientUpload{Request: 1, Total: uint64(len(over)), Data: over[:headerEnd]})
	if done || err == nil || errors.Is(err, ErrChunk) || !strings.Contains(err.Error(), "over the host's world limit") {
		t.Fatalf("the header of an upload declaring 2 GiB under a 1 GiB limit: done %v, %v", done, err)
	}
}

// FuzzUpload feeds an upload arbitrary payload bytes in arbitrary chunk
// sizes: it must never panic, never keep more than the limit, take only
// a payload whose blobs match their hashes, and none whose blobs declare
// more raw bytes than its raw limit.
func FuzzUpload(f *testing.F) {
	pt := testPoint(f, 2, 60)
	good := payloadOf(f, pt, 0, 60, nil)
	f.Add(good, uint16(100))
	f.Add(good, uint16(1))
	f.Add(good[:40], uint16(7))
	f.Add([]byte{0, 0, 0, 0}, uint16(3))
	f.Fuzz(func(t *testing.T, b []byte, chunk uint16) {
		const limit, rawLimit = 1 << 16, 1 << 20
		u := NewUpload(wire.ServerUploadRequest{Request: 1, Kind: wire.UploadJoinPoint, Tick: 60, Limit: limit}).LimitRaw(rawLimit)
		done, err := send(u, b, max(1, int(chunk)))
		if len(b) > limit && err == nil {
			t.Fatalf("a payload of %d bytes over the limit %d was not refused", len(b), limit)
		}
		if !done || err != nil {
			return
		}
		p := u.Point()
		if p.Tick != 60 {
			t.Fatalf("an upload at tick %d taken for tick 60", p.Tick)
		}
		if raw := p.RawSize(); raw > rawLimit {
			t.Fatalf("an upload declaring %d raw bytes taken under a raw limit of %d", raw, rawLimit)
		}
		if n := p.CompressedSize(); n > uint64(len(b)) {
			t.Fatalf("the point holds %d blob bytes of a %d-byte payload", n, len(b))
		}
	})
}
