package main

import (
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cespare/xxhash/v2"

	"github.com/lockhost/lockhost/internal/codec"
	"github.com/lockhost/lockhost/lockstep/locksteptest"
	"github.com/lockhost/lockhost/password"
	"github.com/lockhost/lockhost/snapshot"
	"github.com/lockhost/lockhost/testing/procstat"
	"github.com/lockhost/lockhost/testing/rawclient"
	"github.com/lockhost/lockhost/wire"
)

// The tests in this file run the real host in relay mode against an
// arbiter that breaks the rules, or is slow, played by hand on the wire.

// relayHostileSecret is the arbiter secret of this file's hosts.
var relayHostileSecret = []byte("correct horse battery")

// relayHostileServe starts the host binary in relay mode with args on a
// loopback port and returns it with its address.
func relayHostileServe(t *testing.T, dir string, args ...string) (*hostRun, string) {
	t.Helper()
	secret := filepath.Join(dir, "arbiter-secret.txt")
	if err := os.WriteFile(secret, append(relayHostileSecret, '\n'), 0o600); err != nil {
		t.Fatal(err)
	}
	h := runHost(t, hostBinary(t), append([]string{"serve", "--data-dir", filepath.Join(dir, "data"), "--listen", "127.0.0.1:0",
		"--conn-rate", "-1", "--relay", "--arbiter-secret-file", secret}, args...)...)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("the host's log:\n%s", h.log.String())
		}
	})
	h.waitLog(t, "msg=hosting")
	return h, hostingAddr(t, h.log)
}

// relayHostileJoin runs the handshake to Client_Username as name, reading
// the codecs listed (nil: gzip only), with the arbiter's proof when
// arbiter is set.
func relayHostileJoin(t *testing.T, addr, name string, arbiter bool, codecs []uint8) *rawclient.Conn {
	t.Helper()
	c := rawclient.Dial(t, addr, 2*time.Minute)
	c.Send(&wire.ClientProtocol{Protocol: wire.ProtocolVersion, Codecs: codecs})
	ml := rawclient.Expect[*wire.ServerModList](c, wire.IDServerModList)
	c.Send(&wire.ClientDefs{Databases: ml.Databases})
	rawclient.Expect[*wire.ServerDefsOK](c, wire.IDServerDefsOK)
	u := &wire.ClientUsername{Name: name}
	if arbiter {
		u.ArbiterProof = password.ArbiterProof(relayHostileSecret, ml.ArbiterChallenge)
	}
	c.Send(u)
	return c
}

// relayHostileWorld is a one-map test world at tick 0 as an arbiter
// lays it out (section 8.1) with its header and blobs; edit, when set,
// changes the header and the world blob before they are laid out.
func relayHostileWorld(t *testing.T, edit func(h *snapshot.Header, world *[]byte)) (payload []byte, h snapshot.Header) {
	t.Helper()
	raw, err := snapshot.Cut(locksteptest.New(1, 16))
	if err != nil {
		t.Fatal(err)
	}
	pt, err := raw.Compress(snapshot.Compression{Codec: snapshot.Gzip, Level: snapshot.DefaultLevel})
	if err != nil {
		t.Fatal(err)
	}
	info := func(b snapshot.Blob) snapshot.BlobInfo {
		return snapshot.BlobInfo{Size: uint64(len(b.Data)), RawSize: b.RawSize, Hash: b.Hash, Codec: b.Codec}
	}
	h = snapshot.Header{WorldHash: pt.WorldHash, World: info(pt.World),
		Maps: []snapshot.MapInfo{{ID: pt.Maps[0].ID, Blob: info(pt.Maps[0].Blob), StateHash: pt.Maps[0].StateHash}}}
	world := pt.World.Data
	if edit != nil {
		edit(&h, &world)
	}
	hb, err := codec.Encode(&h)
	if err != nil {
		t.Fatal(err)
	}
	payload = binary.BigEndian.AppendUint32(nil, uint32(len(hb)))
	payload = binary.BigEndian.AppendUint64(payload, xxhash.Sum64(hb))
	payload = append(append(append(payload, hb...), world...), pt.Maps[0].Blob.Data...)
	return payload, h
}

// relayHostileResult reads the host's answer to an upload.
func relayHostileResult(c *rawclient.Conn) *wire.ServerUploadResult {
	return rawclient.Expect[*wire.ServerUploadResult](c, wire.IDServerUploadResult)
}

// TestRelayHostileTickCeiling: the real host refuses a world uploaded at
// tick 2^64-301, which its clock would have wrapped from five seconds
// later, and asks again; a world at a sane tick is taken.
func TestRelayHostileTickCeiling(t *testing.T) {
	t.Parallel()
	_, addr := relayHostileServe(t, t.TempDir())
	arb := relayHostileJoin(t, addr, "Arbiter", true, nil)
	req := rawclient.Expect[*wire.ServerUploadRequest](arb, wire.IDServerUploadRequest)
	late, _ := relayHostileWorld(t, func(h *snapshot.Header, _ *[]byte) { h.Tick, h.Granted = math.MaxUint64-300, math.MaxUint64-300 })
	arb.Upload(req.Request, late)
	if res := relayHostileResult(arb); res.Result != wire.UploadRefused || !strings.Contains(res.Message, "past the last tick") {
		t.Fatalf("a world at tick 2^64-301: %+v, want refused for its tick", res)
	}
	again := rawclient.Expect[*wire.ServerUploadRequest](arb, wire.IDServerUploadRequest)
	sane, h := relayHostileWorld(t, nil)
	arb.Upload(again.Request, sane)
	if res := relayHostileResult(arb); res.Result != wire.UploadAccepted {
		t.Fatalf("a world at tick 0 after the refused one: %+v", res)
	}
	arb.Send(&wire.ClientWorldReady{WorldHash: h.WorldHash})
	rawclient.Expect[*wire.ServerTick](arb, wire.IDServerTick)
}

// TestRelayHostileBomb: a 64 KiB zstd world that inflates to the 2 GiB it
// declares is refused by the real host at upload (over its 1 GiB world
// limit), before anything is inflated, and a joiner that reads only gzip,
// for whom the host would transcode it, gets the next world instead; the
// host's peak memory stays far from the bomb's size. (A host that took
// the bomb inflated it for that joiner: its peak grew by 2,785 MiB.)
func TestRelayHostileBomb(t *testing.T) {
	t.Parallel()
	h, addr := relayHostileServe(t, t.TempDir())
	arb := relayHostileJoin(t, addr, "Arbiter", true, nil)
	req := rawclient.Expect[*wire.ServerUploadRequest](arb, wire.IDServerUploadRequest)
	bombBlob := rawclient.ZstdZeros(t, 2<<30)
	bomb, bh := relayHostileWorld(t, func(h *snapshot.Header, world *[]byte) {
		*world = bombBlob
		h.World = snapshot.BlobInfo{Size: uint64(len(bombBlob)), RawSize: 2 << 30, Hash: xxhash.Sum64(bombBlob), Codec: snapshot.Zstd}
	})
	peakBefore := procstat.PeakRSS(h.cmd.Process.Pid)
	arb.Upload(req.Request, bomb)
	worldHash := bh.WorldHash
	if res := relayHostileResult(arb); res.Result != wire.UploadRefused || !strings.Contains(res.Message, "world limit") {
		t.Errorf("a 2 GiB zstd bomb of %d bytes: %+v, want refused for the world limit", len(bombBlob), res)
	} else {
		again := rawclient.Expect[*wire.ServerUploadRequest](arb, wire.IDServerUploadRequest)
		sane, sh := relayHostileWorld(t, nil)
		arb.Upload(again.Request, sane)
		if res := relayHostileResult(arb); res.Result != wire.UploadAccepted {
			t.Fatalf("a sane world after the bomb: %+v", res)
		}
		worldHash = sh.WorldHash
	}
	arb.Send(&wire.ClientWorldReady{WorldHash: worldHash})
	joiner := relayHostileJoin(t, addr, "Gzipper", false, nil)
	got := packetOf(joiner.Until(wire.IDServerWorldData))
	peakAfter := procstat.PeakRSS(h.cmd.Process.Pid)
	t.Logf("host peak RSS %d KiB before the upload, %d KiB after the gzip joiner's world (+%d MiB); the joiner got %T",
		peakBefore, peakAfter, (peakAfter-peakBefore)>>10, got)
	if _, ok := got.(*wire.ServerWorldData); !ok {
		t.Errorf("the gzip joiner: %+v, want its world", got)
	}
	if grew := (peakAfter - peakBefore) >> 10; grew > 256 {
		t.Errorf("the host's peak memory grew by %d MiB", grew)
	}
}

// TestRelayHostileSlowArbiter: the real host cancels a join point request
// whose joiner's wait ran out (20 s) while the arbiter was half way
// through it; the arbiter abandons it and uploads the next request whole,
// and stays; the next joiner gets its world. (A host that took only one
// upload after another cut the arbiter off with BadPacket: "a chunk of
// upload 3 inside upload 2".)
func TestRelayHostileSlowArbiter(t *testing.T) {
	t.Parallel()
	_, addr := relayHostileServe(t, t.TempDir())
	arb := relayHostileJoin(t, addr, "Arbiter", true, nil)
	req := rawclient.Expect[*wire.ServerUploadRequest](arb, wire.IDServerUploadRequest)
	world, h := relayHostileWorld(t, nil)
	arb.Upload(req.Request, world)
	if res := relayHostileResult(arb); res.Result != wire.UploadAccepted {
		t.Fatalf("the world: %+v", res)
	}
	arb.Send(&wire.ClientWorldReady{WorldHash: h.WorldHash})
	pkts := arb.Pump()
	time.Sleep(10*time.Second + 200*time.Millisecond) // the world's point ages out: the next joiner's is asked for

	alice := relayHostileJoin(t, addr, "Alice", false, nil)
	first := rawclient.Next[*wire.ServerUploadRequest](t, pkts)
	p1, _ := relayHostileWorld(t, func(h *snapshot.Header, _ *[]byte) { h.Tick, h.Granted = first.Tick, first.Tick })
	half := len(p1) / 2
	arb.Send(&wire.ClientUpload{Request: first.Request, Total: uint64(len(p1)), Data: p1[:half]})
	if d, ok := packetOf(alice.Until(wire.IDServerWorldData)).(*wire.ServerDisconnect); !ok || d.Reason != wire.ReasonTimeout {
		t.Fatalf("the joiner of the half-uploaded point: %+v, want a Timeout disconnect", d)
	}

	bob := relayHostileJoin(t, addr, "Bob", false, nil)
	if res := rawclient.Next[*wire.ServerUploadResult](t, pkts); res.Request != first.Request || res.Result != wire.UploadCancelled {
		t.Fatalf("at Bob's admission the arbiter got %+v, want request %d cancelled", res, first.Request)
	}
	second := rawclient.Next[*wire.ServerUploadRequest](t, pkts)
	p2, _ := relayHostileWorld(t, func(h *snapshot.Header, _ *[]byte) { h.Tick, h.Granted = second.Tick, second.Tick })
	arb.Upload(second.Request, p2)
	arb.Send(&wire.ClientUpload{Request: first.Request, Offset: uint64(half), Total: uint64(len(p1)), Data: p1[half:]}) // late
	if res := rawclient.Next[*wire.ServerUploadResult](t, pkts); res.Request != second.Request || res.Result != wire.UploadAccepted {
		t.Fatalf("the upload after the cancelled one: %+v, want request %d accepted", res, second.Request)
	}
	if _, ok := packetOf(bob.Until(wire.IDServerWorldData)).(*wire.ServerWorldData); !ok {
		t.Fatal("Bob got no world")
	}
}

// TestRelayHostileNameAndLogs: the real relay host, given no game name,
// announces "lockhost relay", not the colony; restarted from its save it
// says it serves the saved world, not that it waits for the arbiter's.
func TestRelayHostileNameAndLogs(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	save := filepath.Join(dir, "relay.lhsave")
	h, addr := relayHostileServe(t, dir, "--save", save, "--new")
	if !strings.Contains(h.log.String(), `game="lockhost relay"`) {
		t.Errorf("the relay host given no game name does not announce lockhost relay:\n%s", h.log.String())
	}
	arb := rawclient.Dial(t, addr, 2*time.Minute)
	arb.Send(&wire.ClientProtocol{Protocol: wire.ProtocolVersion})
	ml := rawclient.Expect[*wire.ServerModList](arb, wire.IDServerModList)
	arb.Send(&wire.ClientDefs{Databases: ml.Databases})
	if ok := rawclient.Expect[*wire.ServerDefsOK](arb, wire.IDServerDefsOK); ok.GameName != "lockhost relay" {
		t.Errorf("Server_DefsOK names the game %q, want lockhost relay", ok.GameName)
	}
	arb.Send(&wire.ClientUsername{Name: "Arbiter", ArbiterProof: password.ArbiterProof(relayHostileSecret, ml.ArbiterChallenge)})
	req := rawclient.Expect[*wire.ServerUploadRequest](arb, wire.IDServerUploadRequest)
	world, wh := relayHostileWorld(t, nil)
	arb.Upload(req.Request, world)
	if res := relayHostileResult(arb); res.Result != wire.UploadAccepted {
		t.Fatalf("the world: %+v", res)
	}
	arb.Send(&wire.ClientWorldReady{WorldHash: wh.WorldHash})
	rawclient.Expect[*wire.ServerTick](arb, wire.IDServerTick)
	if code := h.stop(t); code != 0 {
		t.Fatalf("the relay host exited %d:\n%s", code, h.log.String())
	}

	again, _ := relayHostileServe(t, dir, "--save", save)
	again.waitLog(t, "relay host ready")
	log := again.log.String()
	if !strings.Contains(log, `msg="world resumed from the save"`) || !strings.Contains(log, `msg="relay host ready: serving the saved world"`) ||
		strings.Contains(log, "waiting for the arbiter's world") || strings.Contains(log, `msg="world uploaded"`) {
		t.Errorf("the relay host restarted from its save does not say where its world came from:\n%s", log)
	}
}

// packetOf is a packet Until returned, without its size.
func packetOf(p wire.Packet, _ int) wire.Packet { return p }
