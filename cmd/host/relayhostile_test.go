package main

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"io"
	"math"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cespare/xxhash/v2"
	"github.com/klauspost/compress/zstd"

	"github.com/lockhost/lockhost/internal/codec"
	"github.com/lockhost/lockhost/lockstep/locksteptest"
	"github.com/lockhost/lockhost/password"
	"github.com/lockhost/lockhost/snapshot"
	"github.com/lockhost/lockhost/testing/procstat"
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

// relayHostileConn speaks the protocol by hand to a host.
type relayHostileConn struct {
	t  *testing.T
	nc net.Conn
	fr *wire.FrameReader
}

func relayHostileDial(t *testing.T, addr string) *relayHostileConn {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	_ = nc.SetDeadline(time.Now().Add(2 * time.Minute)) // bounds a hang only
	return &relayHostileConn{t: t, nc: nc, fr: wire.NewFrameReader(bufio.NewReader(nc), wire.DefaultMaxFrame)}
}

func (c *relayHostileConn) send(p wire.Packet) {
	c.t.Helper()
	if _, err := c.nc.Write(wire.MustMarshal(p)); err != nil {
		c.t.Fatal(err)
	}
}

// until reads, answering clock rounds, until a packet with one of ids or
// a disconnect arrives, and returns it.
func (c *relayHostileConn) until(ids ...wire.ID) wire.Packet {
	c.t.Helper()
	for {
		id, body, err := c.fr.Next()
		if err != nil {
			c.t.Fatalf("waiting for %v: %v", ids, err)
		}
		if id != wire.IDServerDisconnect && id != wire.IDServerClock && !slices.Contains(ids, id) {
			continue
		}
		p, err := wire.Decode(id, body)
		if err != nil {
			c.t.Fatal(err)
		}
		if ck, ok := p.(*wire.ServerClock); ok {
			c.send(&wire.ClientClock{Nonce: ck.Nonce, ClientTime: time.Now().UnixMicro()})
			continue
		}
		return p
	}
}

// relayHostileExpect is until for one packet, which must come (not a disconnect).
func relayHostileExpect[T wire.Packet](c *relayHostileConn, id wire.ID) T {
	c.t.Helper()
	p := c.until(id)
	got, ok := p.(T)
	if !ok {
		c.t.Fatalf("waiting for %s: got %+v", id, p)
	}
	return got
}

// relayHostileJoin runs the handshake to Client_Username as name, reading
// the codecs listed (nil: gzip only), with the arbiter's proof when
// arbiter is set.
func relayHostileJoin(t *testing.T, addr, name string, arbiter bool, codecs []uint8) *relayHostileConn {
	t.Helper()
	c := relayHostileDial(t, addr)
	c.send(&wire.ClientProtocol{Protocol: wire.ProtocolVersion, Codecs: codecs})
	ml := relayHostileExpect[*wire.ServerModList](c, wire.IDServerModList)
	c.send(&wire.ClientDefs{Databases: ml.Databases})
	relayHostileExpect[*wire.ServerDefsOK](c, wire.IDServerDefsOK)
	u := &wire.ClientUsername{Name: name}
	if arbiter {
		u.ArbiterProof = password.ArbiterProof(relayHostileSecret, ml.ArbiterChallenge)
	}
	c.send(u)
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

// pump has c play a live client from now on, in the background: it
// answers clock rounds, echoes keepalives and acknowledges ticks, and hands on the host's
// upload requests, upload results and disconnect. The channel closes
// when the connection ends; c's reads are the pump's from then on.
func (c *relayHostileConn) pump() <-chan wire.Packet {
	out := make(chan wire.Packet, 16)
	go func() {
		defer close(out)
		for {
			id, body, err := c.fr.Next()
			if err != nil {
				return
			}
			p, err := wire.Decode(id, body)
			if err != nil {
				return
			}
			var answer wire.Packet
			switch p := p.(type) {
			case *wire.ServerKeepalive:
				answer = &wire.ClientKeepalive{Seq: p.Seq, HostTime: p.HostTime}
			case *wire.ServerTick:
				answer = &wire.ClientTickAck{Tick: p.Granted}
			case *wire.ServerClock:
				answer = &wire.ClientClock{Nonce: p.Nonce, ClientTime: time.Now().UnixMicro()}
			case *wire.ServerUploadRequest, *wire.ServerUploadResult, *wire.ServerDisconnect:
				out <- p
			}
			if answer != nil {
				if _, err := c.nc.Write(wire.MustMarshal(answer)); err != nil {
					return
				}
			}
		}
	}()
	return out
}

// relayHostileNext takes the next packet pump handed on, which must be a T.
func relayHostileNext[T wire.Packet](t *testing.T, pkts <-chan wire.Packet) T {
	t.Helper()
	p, open := <-pkts
	got, ok := p.(T)
	if !ok {
		var want T
		t.Fatalf("the arbiter got %+v (connection open: %v), want a %T", p, open, want)
	}
	return got
}

// upload sends payload as the answer to request q, in chunks.
func (c *relayHostileConn) upload(q uint32, payload []byte) {
	c.t.Helper()
	for o := 0; o < len(payload); o += wire.MaxChunkData {
		end := min(o+wire.MaxChunkData, len(payload))
		c.send(&wire.ClientUpload{Request: q, Offset: uint64(o), Total: uint64(len(payload)), Data: payload[o:end]})
	}
}

// result reads the host's answer to an upload.
func (c *relayHostileConn) result() *wire.ServerUploadResult {
	c.t.Helper()
	return relayHostileExpect[*wire.ServerUploadResult](c, wire.IDServerUploadResult)
}

// TestRelayHostileTickCeiling: the real host refuses a world uploaded at
// tick 2^64-301, which its clock would have wrapped from five seconds
// later, and asks again; a world at a sane tick is taken.
func TestRelayHostileTickCeiling(t *testing.T) {
	t.Parallel()
	_, addr := relayHostileServe(t, t.TempDir())
	arb := relayHostileJoin(t, addr, "Arbiter", true, nil)
	req := relayHostileExpect[*wire.ServerUploadRequest](arb, wire.IDServerUploadRequest)
	late, _ := relayHostileWorld(t, func(h *snapshot.Header, _ *[]byte) { h.Tick, h.Granted = math.MaxUint64-300, math.MaxUint64-300 })
	arb.upload(req.Request, late)
	if res := arb.result(); res.Result != wire.UploadRefused || !strings.Contains(res.Message, "past the last tick") {
		t.Fatalf("a world at tick 2^64-301: %+v, want refused for its tick", res)
	}
	again := relayHostileExpect[*wire.ServerUploadRequest](arb, wire.IDServerUploadRequest)
	sane, h := relayHostileWorld(t, nil)
	arb.upload(again.Request, sane)
	if res := arb.result(); res.Result != wire.UploadAccepted {
		t.Fatalf("a world at tick 0 after the refused one: %+v", res)
	}
	arb.send(&wire.ClientWorldReady{WorldHash: h.WorldHash})
	relayHostileExpect[*wire.ServerTick](arb, wire.IDServerTick)
}

// relayHostileZstdZeros is a zstd stream of n zero bytes: about 4 bytes a 128 KiB
// block, 64 KiB for 2 GiB.
func relayHostileZstdZeros(t *testing.T, n int64) []byte {
	t.Helper()
	var b bytes.Buffer
	enc, err := zstd.NewWriter(&b, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderCRC(false))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.CopyN(enc, relayHostileZeros{}, n); err != nil {
		t.Fatal(err)
	}
	if err := enc.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

type relayHostileZeros struct{}

func (relayHostileZeros) Read(p []byte) (int, error) { clear(p); return len(p), nil }

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
	req := relayHostileExpect[*wire.ServerUploadRequest](arb, wire.IDServerUploadRequest)
	bombBlob := relayHostileZstdZeros(t, 2<<30)
	bomb, bh := relayHostileWorld(t, func(h *snapshot.Header, world *[]byte) {
		*world = bombBlob
		h.World = snapshot.BlobInfo{Size: uint64(len(bombBlob)), RawSize: 2 << 30, Hash: xxhash.Sum64(bombBlob), Codec: snapshot.Zstd}
	})
	peakBefore := procstat.PeakRSS(h.cmd.Process.Pid)
	arb.upload(req.Request, bomb)
	worldHash := bh.WorldHash
	if res := arb.result(); res.Result != wire.UploadRefused || !strings.Contains(res.Message, "world limit") {
		t.Errorf("a 2 GiB zstd bomb of %d bytes: %+v, want refused for the world limit", len(bombBlob), res)
	} else {
		again := relayHostileExpect[*wire.ServerUploadRequest](arb, wire.IDServerUploadRequest)
		sane, sh := relayHostileWorld(t, nil)
		arb.upload(again.Request, sane)
		if res := arb.result(); res.Result != wire.UploadAccepted {
			t.Fatalf("a sane world after the bomb: %+v", res)
		}
		worldHash = sh.WorldHash
	}
	arb.send(&wire.ClientWorldReady{WorldHash: worldHash})
	joiner := relayHostileJoin(t, addr, "Gzipper", false, nil)
	got := joiner.until(wire.IDServerWorldData)
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
	req := relayHostileExpect[*wire.ServerUploadRequest](arb, wire.IDServerUploadRequest)
	world, h := relayHostileWorld(t, nil)
	arb.upload(req.Request, world)
	if res := arb.result(); res.Result != wire.UploadAccepted {
		t.Fatalf("the world: %+v", res)
	}
	arb.send(&wire.ClientWorldReady{WorldHash: h.WorldHash})
	pkts := arb.pump()
	time.Sleep(10*time.Second + 200*time.Millisecond) // the world's point ages out: the next joiner's is asked for

	alice := relayHostileJoin(t, addr, "Alice", false, nil)
	first := relayHostileNext[*wire.ServerUploadRequest](t, pkts)
	p1, _ := relayHostileWorld(t, func(h *snapshot.Header, _ *[]byte) { h.Tick, h.Granted = first.Tick, first.Tick })
	half := len(p1) / 2
	arb.send(&wire.ClientUpload{Request: first.Request, Total: uint64(len(p1)), Data: p1[:half]})
	if d, ok := alice.until(wire.IDServerWorldData).(*wire.ServerDisconnect); !ok || d.Reason != wire.ReasonTimeout {
		t.Fatalf("the joiner of the half-uploaded point: %+v, want a Timeout disconnect", d)
	}

	bob := relayHostileJoin(t, addr, "Bob", false, nil)
	if res := relayHostileNext[*wire.ServerUploadResult](t, pkts); res.Request != first.Request || res.Result != wire.UploadCancelled {
		t.Fatalf("at Bob's admission the arbiter got %+v, want request %d cancelled", res, first.Request)
	}
	second := relayHostileNext[*wire.ServerUploadRequest](t, pkts)
	p2, _ := relayHostileWorld(t, func(h *snapshot.Header, _ *[]byte) { h.Tick, h.Granted = second.Tick, second.Tick })
	arb.upload(second.Request, p2)
	arb.send(&wire.ClientUpload{Request: first.Request, Offset: uint64(half), Total: uint64(len(p1)), Data: p1[half:]}) // late
	if res := relayHostileNext[*wire.ServerUploadResult](t, pkts); res.Request != second.Request || res.Result != wire.UploadAccepted {
		t.Fatalf("the upload after the cancelled one: %+v, want request %d accepted", res, second.Request)
	}
	if _, ok := bob.until(wire.IDServerWorldData).(*wire.ServerWorldData); !ok {
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
	arb := relayHostileDial(t, addr)
	arb.send(&wire.ClientProtocol{Protocol: wire.ProtocolVersion})
	ml := relayHostileExpect[*wire.ServerModList](arb, wire.IDServerModList)
	arb.send(&wire.ClientDefs{Databases: ml.Databases})
	if ok := relayHostileExpect[*wire.ServerDefsOK](arb, wire.IDServerDefsOK); ok.GameName != "lockhost relay" {
		t.Errorf("Server_DefsOK names the game %q, want lockhost relay", ok.GameName)
	}
	arb.send(&wire.ClientUsername{Name: "Arbiter", ArbiterProof: password.ArbiterProof(relayHostileSecret, ml.ArbiterChallenge)})
	req := relayHostileExpect[*wire.ServerUploadRequest](arb, wire.IDServerUploadRequest)
	world, wh := relayHostileWorld(t, nil)
	arb.upload(req.Request, world)
	if res := arb.result(); res.Result != wire.UploadAccepted {
		t.Fatalf("the world: %+v", res)
	}
	arb.send(&wire.ClientWorldReady{WorldHash: wh.WorldHash})
	relayHostileExpect[*wire.ServerTick](arb, wire.IDServerTick)
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
