package host_test

import (
	"bytes"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/lockhost/lockhost/host/relay"
	"github.com/lockhost/lockhost/lockstep/locksteptest"
	"github.com/lockhost/lockhost/password"
	"github.com/lockhost/lockhost/snapshot"
	"github.com/lockhost/lockhost/wire"
)

// relayWorkedUpload is the world of the worked handshake as an arbiter
// uploads it: faction 0, the grant at the tick, no commands.
func relayWorkedUpload(t *testing.T) []byte {
	t.Helper()
	raw, err := snapshot.Cut(locksteptest.New(1, 16))
	if err != nil {
		t.Fatal(err)
	}
	pt, err := raw.Compress(snapshot.Compression{Codec: snapshot.Gzip, Level: snapshot.DefaultLevel})
	if err != nil {
		t.Fatal(err)
	}
	pl, err := snapshot.NewPayload(pt, 0, pt.Tick, nil)
	if err != nil {
		t.Fatal(err)
	}
	return pl.Bytes()
}

// relayWorked is the specification's worked relay session (section
// 14.8): the first arbiter of a new session proves the secret and
// uploads the world.
func relayWorked(t *testing.T) []workedStep {
	t.Helper()
	payload := relayWorkedUpload(t)
	// The upload is one the host takes: it passes relay.Upload's checks.
	req := wire.ServerUploadRequest{Request: 1, Kind: wire.UploadWorld, Limit: wire.DefaultUploadLimit}
	up := relay.NewUpload(req)
	chunk := &wire.ClientUpload{Request: 1, Offset: 0, Total: uint64(len(payload)), Data: payload}
	if done, err := up.Add(chunk); !done || err != nil {
		t.Fatalf("the worked upload is not taken: done %v, %v", done, err)
	}
	pt := up.Point()
	challenge := bytes.Repeat([]byte{0x33}, password.ChallengeSize)
	return []workedStep{
		{false, &wire.ServerModList{GameVersion: "1.5", Mods: []string{"lockhost.core"}, ArbiterChallenge: challenge},
			"no password, no def databases, a 32-byte arbiter challenge"},
		{true, &wire.ClientUsername{Name: "arb", ArbiterProof: password.ArbiterProof([]byte("correct horse battery"), challenge)},
			`name "arb", arbiterProof = HMAC-SHA256("correct horse battery", domain || arbiterChallenge)`},
		{false, &wire.ServerSession{Token: bytes.Repeat([]byte{0xc4}, wire.TokenSize), GraceMs: 300000, PlayerID: 1, HashEvery: 60},
			"admitted: the rejoin token, 5 min of grace, lasting ID 1, hashes every 60 ticks: the arbiter's are the reference (section 14.6)"},
		{false, &wire.ServerPlayerList{Action: wire.PlayerListFull, Players: []wire.PlayerInfo{{ID: 1, Name: "arb", Faction: 1, Status: wire.StatusDownloading}}},
			"the whole player list; the notices of section 15 steps 10 and 11 follow"},
		{false, &req, "instead of a world: upload yours, at most 1 GiB"},
		{true, chunk, fmt.Sprintf("the whole payload of %d bytes in one chunk", len(payload))},
		{false, &wire.ServerUploadResult{Request: 1, Result: wire.UploadAccepted}, "taken: the session's clock starts at the header's tick"},
		{true, &wire.ClientWorldReady{Tick: pt.Tick, WorldHash: pt.WorldHash}, "ready at the uploaded tick with the uploaded world hash"},
	}
}

var relayStepRe = regexp.MustCompile("(?m)^Relay step R\\d+, .*\\n\\n```hex\\n[0-9a-f \\n]+```\\n")

// TestWorkedRelayInSpec holds the specification's worked relay session
// to what the code encodes for it, byte for byte; its upload passes the
// checks a relay host makes.
func TestWorkedRelayInSpec(t *testing.T) {
	spec, err := os.ReadFile("../docs/protocol.md")
	if err != nil {
		t.Fatal(err)
	}
	var sb strings.Builder
	for i, s := range relayWorked(t) {
		dir := "host to client"
		if s.fromClient {
			dir = "client to host"
		}
		fmt.Fprintf(&sb, "Relay step R%d, %s: %s (%s)\n\n```hex\n%s```\n\n", i+2, dir, s.p.ID(), s.note, hexRows(wire.MustMarshal(s.p)))
	}
	got := strings.Join(relayStepRe.FindAllString(string(spec), -1), "\n")
	if want := strings.TrimSuffix(sb.String(), "\n"); got != want {
		t.Errorf("the spec's worked relay session differs from the code's; it should read:\n%s", want)
	}
}
