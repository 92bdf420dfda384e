package host_test

import (
	"context"
	"encoding/binary"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/cespare/xxhash/v2"

	"github.com/lockhost/lockhost/host"
	"github.com/lockhost/lockhost/internal/codec"
	"github.com/lockhost/lockhost/join"
	"github.com/lockhost/lockhost/join/jointest"
	"github.com/lockhost/lockhost/lockstep"
	"github.com/lockhost/lockhost/lockstep/locksteptest"
	"github.com/lockhost/lockhost/password"
	"github.com/lockhost/lockhost/snapshot"
	"github.com/lockhost/lockhost/testing/rawclient"
	"github.com/lockhost/lockhost/testing/syncbuf"
	"github.com/lockhost/lockhost/testing/testkit"
	"github.com/lockhost/lockhost/wire"
)

// The tests in this file are an arbiter that breaks the rules, or is
// slow, played by hand against a relay host.

// hostileArbiter proves the arbiter secret to the relay host at addr and
// returns the client with the host's request for the session's world.
func hostileArbiter(t *testing.T, addr string) (*rawclient.Conn, *wire.ServerUploadRequest) {
	t.Helper()
	c := rawclient.Dial(t, addr, time.Minute)
	c.Send(&wire.ClientProtocol{Protocol: wire.ProtocolVersion})
	ml := rawclient.Expect[*wire.ServerModList](c, wire.IDServerModList)
	c.Send(&wire.ClientDefs{Databases: ml.Databases})
	rawclient.Expect[*wire.ServerDefsOK](c, wire.IDServerDefsOK)
	c.Send(&wire.ClientUsername{Name: "Hostile", ArbiterProof: password.ArbiterProof(relaySecret, ml.ArbiterChallenge)})
	return c, rawclient.Expect[*wire.ServerUploadRequest](c, wire.IDServerUploadRequest)
}

// worldAt is the one-map test world stepped to tick, its header and
// blobs as an arbiter uploads them (the grant at the tick, no commands).
// A tick past 4096 is claimed by the header only: the state is at 0.
func worldAt(t *testing.T, tick uint64) (snapshot.Header, [][]byte) {
	t.Helper()
	sim := locksteptest.New(1, 16)
	for tick <= 4096 && sim.Tick() < tick {
		sim.Step()
	}
	raw, err := snapshot.Cut(sim)
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
	h := snapshot.Header{Tick: tick, Granted: tick, WorldHash: pt.WorldHash, World: info(pt.World)}
	blobs := [][]byte{pt.World.Data}
	for _, m := range pt.Maps {
		h.Maps = append(h.Maps, snapshot.MapInfo{ID: m.ID, Blob: info(m.Blob), StateHash: m.StateHash})
		blobs = append(blobs, m.Blob.Data)
	}
	return h, blobs
}

// layOut lays out a world payload by hand (section 8.1), header h and
// then blobs, checking nothing of either: what a hostile arbiter sends.
func layOut(t *testing.T, h snapshot.Header, blobs [][]byte) []byte {
	t.Helper()
	hb, err := codec.Encode(&h)
	if err != nil {
		t.Fatal(err)
	}
	out := binary.BigEndian.AppendUint32(nil, uint32(len(hb)))
	out = binary.BigEndian.AppendUint64(out, xxhash.Sum64(hb))
	out = append(out, hb...)
	for _, b := range blobs {
		out = append(out, b...)
	}
	return out
}

// withBlob replaces the world blob of h and blobs with data, declaring
// raw bytes of codec c.
func withBlob(h *snapshot.Header, blobs [][]byte, data []byte, raw uint64, c snapshot.Codec) {
	h.World = snapshot.BlobInfo{Size: uint64(len(data)), RawSize: raw, Hash: xxhash.Sum64(data), Codec: c}
	blobs[0] = data
}

// uploadWorld has the arbiter c answer the world request req with the
// test world at tick and say WorldReady.
func uploadWorld(t *testing.T, c *rawclient.Conn, req *wire.ServerUploadRequest, tick uint64) {
	t.Helper()
	h, blobs := worldAt(t, tick)
	c.Upload(req.Request, layOut(t, h, blobs))
	if res := rawclient.Expect[*wire.ServerUploadResult](c, wire.IDServerUploadResult); res.Result != wire.UploadAccepted {
		t.Fatalf("the world upload at tick %d: %+v, want accepted", tick, res)
	}
	c.Send(&wire.ClientWorldReady{Tick: tick, WorldHash: h.WorldHash})
}

// joinAsync joins addr as name in the background; the channel gives the
// join's outcome. mods change the join's context.
func joinAsync(t *testing.T, addr, name string, opt jointest.Options) <-chan error {
	t.Helper()
	errc := make(chan error, 1)
	go func() {
		s, err := join.Join(jointest.With(context.Background(), opt), joinCfg(addr, name, newHashLog()))
		if err == nil {
			s.Close()
		}
		errc <- err
	}()
	return errc
}

// TestRelayWorldPastMaxTick: a world uploaded at a tick the session could
// never reach (2^64-301: its clock would wrap to 0 five seconds later,
// cutting off the arbiter and refusing every joiner) is refused, and the
// host asks again; a world just short of lockstep.MaxTick is taken, and
// the clock stops there instead of going past it.
func TestRelayWorldPastMaxTick(t *testing.T) {
	var logs syncbuf.Buffer
	h := startRelay(t, host.Config{}, &logs)
	arb, req := hostileArbiter(t, h.Addr)
	hd, blobs := worldAt(t, math.MaxUint64-300)
	arb.Upload(req.Request, layOut(t, hd, blobs))
	res := rawclient.Expect[*wire.ServerUploadResult](arb, wire.IDServerUploadResult)
	if res.Result != wire.UploadRefused || !strings.Contains(res.Message, "past the last tick") {
		t.Fatalf("a world at tick 2^64-301: %+v, want refused for its tick", res)
	}
	again := rawclient.Expect[*wire.ServerUploadRequest](arb, wire.IDServerUploadRequest)
	if again.Kind != wire.UploadWorld || again.Request <= req.Request {
		t.Fatalf("after the refusal the host asked %+v, want the world again", again)
	}
	uploadWorld(t, arb, again, lockstep.MaxTick-20)
	testkit.WaitFor(t, "the clock at lockstep.MaxTick", func() bool { return h.Server.Overview().Tick >= lockstep.MaxTick })
	time.Sleep(250 * time.Millisecond) // 50 ticks at 200 a second, were the clock to run on
	if tick := h.Server.Overview().Tick; tick != lockstep.MaxTick {
		t.Fatalf("the clock went on to tick %d, past lockstep.MaxTick %d", tick, uint64(lockstep.MaxTick))
	}
}

// TestRelayUploadAfterCancel: the host cancels a join point request whose
// joiner's wait ran out; the arbiter, half way through that upload,
// abandons it and uploads the next request whole, with a late chunk of
// the cancelled one in the middle. The late chunk is dropped, the new
// upload taken, and its joiner joins; the arbiter stays.
func TestRelayUploadAfterCancel(t *testing.T) {
	var logs syncbuf.Buffer
	h := startRelay(t, host.Config{Join: host.JoinConfig{JoinPointMaxAge: time.Millisecond},
		Relay: host.RelayConfig{UploadWait: 300 * time.Millisecond}}, &logs)
	arb, req := hostileArbiter(t, h.Addr)
	uploadWorld(t, arb, req, 0)
	pkts := arb.Pump()
	time.Sleep(20 * time.Millisecond) // the world's point ages past its 1 ms

	alice := joinAsync(t, h.Addr, "Alice", jointest.Options{})
	first := rawclient.Next[*wire.ServerUploadRequest](t, pkts)
	hd, blobs := worldAt(t, first.Tick)
	p1 := layOut(t, hd, blobs)
	half := len(p1) / 2
	arb.Send(&wire.ClientUpload{Request: first.Request, Total: uint64(len(p1)), Data: p1[:half]})
	var re *join.RejectedError
	if err := <-alice; !errors.As(err, &re) || re.Reason != wire.ReasonTimeout {
		t.Fatalf("the joiner of the half-uploaded point: %v, want refused (Timeout)", err)
	}

	bob := joinAsync(t, h.Addr, "Bob", jointest.Options{})
	if res := rawclient.Next[*wire.ServerUploadResult](t, pkts); res.Request != first.Request || res.Result != wire.UploadCancelled {
		t.Fatalf("at Bob's admission the arbiter got %+v, want request %d cancelled", res, first.Request)
	}
	second := rawclient.Next[*wire.ServerUploadRequest](t, pkts)
	hd, blobs = worldAt(t, second.Tick)
	p2 := layOut(t, hd, blobs)
	arb.Send(&wire.ClientUpload{Request: second.Request, Total: uint64(len(p2)), Data: p2[:len(p2)/2]})
	arb.Send(&wire.ClientUpload{Request: first.Request, Offset: uint64(half), Total: uint64(len(p1)), Data: p1[half:]})
	arb.UploadFrom(second.Request, p2, len(p2)/2)
	if res := rawclient.Next[*wire.ServerUploadResult](t, pkts); res.Request != second.Request || res.Result != wire.UploadAccepted {
		t.Fatalf("the upload after the cancelled one: %+v, want request %d accepted", res, second.Request)
	}
	if err := <-bob; err != nil {
		t.Fatalf("Bob, whose point the arbiter uploaded after abandoning the cancelled one: %v", err)
	}
	if !strings.Contains(logs.String(), "upload abandoned: its request was cancelled") {
		t.Errorf("the host did not log the abandoned upload:\n%s", logs.String())
	}
}

// TestRelayUploadOverWorldLimit: an upload whose blob declares more raw
// bytes than the host's world limit (a 2 GiB zstd bomb, 1 GiB by
// default) is refused before anything of it is inflated, and the host
// asks again.
func TestRelayUploadOverWorldLimit(t *testing.T) {
	var logs syncbuf.Buffer
	h := startRelay(t, host.Config{}, &logs)
	arb, req := hostileArbiter(t, h.Addr)
	hd, blobs := worldAt(t, 0)
	// The bytes are never inflated: a few stand for the 2 GiB they claim.
	withBlob(&hd, blobs, rawclient.ZstdZeros(t, 1<<20), 2<<30, snapshot.Zstd)
	arb.Upload(req.Request, layOut(t, hd, blobs))
	res := rawclient.Expect[*wire.ServerUploadResult](arb, wire.IDServerUploadResult)
	if res.Result != wire.UploadRefused || !strings.Contains(res.Message, "over the host's world limit of 1073741824") {
		t.Fatalf("a world declaring 2 GiB raw: %+v, want refused for the world limit", res)
	}
	again := rawclient.Expect[*wire.ServerUploadRequest](arb, wire.IDServerUploadRequest)
	uploadWorld(t, arb, again, 0)
}

// TestRelayTranscodeBoundedByDeclared: a zstd world whose blob declares
// 64 KiB raw but inflates to 4 MiB is taken (the host inflates nothing it
// takes); a joiner that reads only gzip, for whom the host transcodes it,
// is refused once the blob passes its declared size, and the host says
// so: what it inflated never passed the declaration.
func TestRelayTranscodeBoundedByDeclared(t *testing.T) {
	var logs syncbuf.Buffer
	h := startRelay(t, host.Config{}, &logs)
	arb, req := hostileArbiter(t, h.Addr)
	hd, blobs := worldAt(t, 0)
	withBlob(&hd, blobs, rawclient.ZstdZeros(t, 4<<20), 64<<10, snapshot.Zstd)
	arb.Upload(req.Request, layOut(t, hd, blobs))
	if res := rawclient.Expect[*wire.ServerUploadResult](arb, wire.IDServerUploadResult); res.Result != wire.UploadAccepted {
		t.Fatalf("the lying world: %+v, want accepted (the host does not inflate it)", res)
	}
	arb.Send(&wire.ClientWorldReady{Tick: 0, WorldHash: hd.WorldHash})
	err := <-joinAsync(t, h.Addr, "Gzipper", jointest.Options{Codecs: []uint8{uint8(snapshot.Gzip)}})
	var re *join.RejectedError
	if !errors.As(err, &re) || re.Reason != wire.ReasonGeneric || !strings.Contains(re.Message, "could not prepare the world") {
		t.Fatalf("a gzip joiner of the lying world: %v, want refused", err)
	}
	if !strings.Contains(logs.String(), snapshot.ErrTooLarge.Error()) {
		t.Fatalf("the host did not log the blob past its declared size:\n%s", logs.String())
	}
}

// TestRelayLogsTellTheTruth: a relay host announces itself with the
// relay's name, not the colony's; one resumed from a save says its world
// came from the save, not from an upload; and a join point cut while no
// arbiter is active (the one asked for it left without uploading) is
// logged as waiting for an arbiter, not as asked of arbiter 0.
func TestRelayLogsTellTheTruth(t *testing.T) {
	var logs syncbuf.Buffer
	h := startRelay(t, host.Config{Join: host.JoinConfig{JoinPointMaxAge: time.Millisecond},
		Relay: host.RelayConfig{UploadWait: 300 * time.Millisecond}}, &logs)
	arb, req := hostileArbiter(t, h.Addr)
	uploadWorld(t, arb, req, 0)
	pkts := arb.Pump()
	testkit.WaitFor(t, "the overview", func() bool { return h.Server.Overview().Game != "" })
	if got := h.Server.Overview().Game; got != "lockhost relay" {
		t.Errorf("a relay host given no game name announces %q, want %q", got, "lockhost relay")
	}
	time.Sleep(20 * time.Millisecond) // the world's point ages past its 1 ms

	alice := joinAsync(t, h.Addr, "Alice", jointest.Options{})
	rawclient.Next[*wire.ServerUploadRequest](t, pkts)
	arb.Close() // the arbiter leaves, Alice's point not uploaded
	if err := <-alice; err == nil {
		t.Fatal("Alice joined a point nobody uploaded")
	}
	testkit.WaitFor(t, "the arbiter gone", func() bool { return strings.Contains(logs.String(), `msg="arbiter left"`) })
	var re *join.RejectedError
	if err := <-joinAsync(t, h.Addr, "Bob", jointest.Options{}); !errors.As(err, &re) || re.Reason != wire.ReasonTimeout {
		t.Fatalf("Bob, with no arbiter to upload his point: %v, want refused (Timeout)", err)
	}
	if strings.Contains(logs.String(), "arbiter=0") || !strings.Contains(logs.String(), "join point request waits for an arbiter") {
		t.Errorf("the point cut with no arbiter active is not logged as waiting for one:\n%s", logs.String())
	}

	// A host resumed from a save has its world from the save.
	hd, blobs := worldAt(t, 40)
	pt := &snapshot.Parsed{Header: hd}
	pt.World = hd.World.Blob(blobs[0])
	pt.Maps = append(pt.Maps, hd.Maps[0].Blob.Blob(blobs[1]))
	var logs2 syncbuf.Buffer
	h2 := startRelay(t, host.Config{GameName: "drift", Relay: host.RelayConfig{Resume: pt}}, &logs2)
	if !strings.Contains(logs2.String(), `msg="world resumed from the save" tick=40`) || strings.Contains(logs2.String(), "world uploaded") {
		t.Errorf("a relay host resumed from a save does not say so:\n%s", logs2.String())
	}
	testkit.WaitFor(t, "the resumed host's overview", func() bool { return h2.Server.Overview().Game != "" })
	if got := h2.Server.Overview().Game; got != "drift" {
		t.Errorf("a relay host given the game name drift announces %q", got)
	}
}

// TestRelayJoinerWaitingNotSilent: a joiner waiting for the arbiter's
// upload of its join point, three idle limits long, is not dropped as
// silent: its reader reads nothing meanwhile, the host keeps it waiting,
// and it joins once the upload comes.
func TestRelayJoinerWaitingNotSilent(t *testing.T) {
	var logs syncbuf.Buffer
	h := startRelay(t, host.Config{Join: host.JoinConfig{JoinPointMaxAge: time.Millisecond},
		Timeouts: host.TimeoutConfig{KeepaliveEvery: 50 * time.Millisecond, Idle: 500 * time.Millisecond}}, &logs)
	arb, req := hostileArbiter(t, h.Addr)
	uploadWorld(t, arb, req, 0)
	pkts := arb.Pump()
	time.Sleep(20 * time.Millisecond) // the world's point ages past its 1 ms

	alice := joinAsync(t, h.Addr, "Alice", jointest.Options{})
	asked := rawclient.Next[*wire.ServerUploadRequest](t, pkts)
	time.Sleep(1500 * time.Millisecond) // three idle limits: the arbiter is slow
	hd, blobs := worldAt(t, asked.Tick)
	arb.Upload(asked.Request, layOut(t, hd, blobs))
	if err := <-alice; err != nil {
		t.Fatalf("a joiner kept waiting for the arbiter: %v\n%s", err, logs.String())
	}
}

// TestRelayResumePastMaxTick: a relay host is not started from a save
// whose tick is past lockstep.MaxTick, however the save was made.
func TestRelayResumePastMaxTick(t *testing.T) {
	hd, blobs := worldAt(t, math.MaxUint64-300)
	pt := &snapshot.Parsed{Header: hd, World: hd.World.Blob(blobs[0]), Maps: []snapshot.Blob{hd.Maps[0].Blob.Blob(blobs[1])}}
	cfg := host.Config{Relay: host.RelayConfig{ArbiterSecret: relaySecret, Resume: pt}, Logger: testkit.Quiet()}
	if _, err := host.NewRelay(cfg, host.Content{}); err == nil || !strings.Contains(err.Error(), "past the last tick") {
		t.Fatalf("a relay host from a save at tick 2^64-301: %v, want refused for its tick", err)
	}
}
