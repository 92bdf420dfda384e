package host_test

import (
	"context"
	"errors"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/lockhost/lockhost/defs"
	"github.com/lockhost/lockhost/host"
	"github.com/lockhost/lockhost/join"
	"github.com/lockhost/lockhost/saves"
	"github.com/lockhost/lockhost/testing/hosttest"
	"github.com/lockhost/lockhost/testing/syncbuf"
	"github.com/lockhost/lockhost/wire"
)

// startDeclaring serves a relay host on loopback whose def databases
// come from its arbiter's declaration; content gives the saved ones of
// a resumed session.
func startDeclaring(t *testing.T, cfg host.Config, content host.Content, logs *syncbuf.Buffer) *hosttest.Host {
	t.Helper()
	cfg.TickRate = 200
	cfg.Relay.ArbiterSecret = relaySecret
	cfg.Relay.DefsFromArbiter = true
	cfg.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	content.GameVersion = "1.5"
	return hosttest.StartRelay(t, cfg, content)
}

// otherDefs differ from testDefs in TerrainDef's hash and have a
// database testDefs lacks.
var otherDefs = []defs.Summary{{Type: "ThingDef", Count: 3, Hash: 0xABCDEF}, {Type: "TerrainDef", Count: 2, Hash: 0x1235}, {Type: "SoundDef", Count: 1, Hash: 7}}

// wireSummaries is dbs as Client_Defs declares them.
func wireSummaries(dbs []defs.Summary) []wire.DefSummary {
	out := make([]wire.DefSummary, len(dbs))
	for i, d := range dbs {
		out[i] = wire.DefSummary{Type: d.Type, Count: d.Count, Hash: d.Hash}
	}
	return out
}

// defsRefused joins addr declaring dbs (as the arbiter with secret, if
// set) and returns the refusal, which must be for Defs.
func defsRefused(t *testing.T, addr, name string, dbs []defs.Summary, secret []byte) *join.RejectedError {
	t.Helper()
	cfg := joinCfg(addr, name, newHashLog())
	cfg.Databases, cfg.ArbiterSecret = dbs, secret
	_, err := join.Join(context.Background(), cfg)
	var re *join.RejectedError
	if !errors.As(err, &re) || re.Reason != wire.ReasonDefs {
		t.Fatalf("%s declaring other def databases: %v, want refused for Defs", name, err)
	}
	return re
}

// detailTypes are the database types a Defs refusal's detail describes.
func detailTypes(t *testing.T, re *join.RejectedError) []string {
	t.Helper()
	m, err := defs.UnmarshalDetail(re.Detail)
	if err != nil {
		t.Fatalf("the refusal's detail: %v", err)
	}
	var types []string
	for _, d := range m.Databases {
		types = append(types, d.Type)
	}
	return types
}

// TestRelayDefsFromArbiter: a relay host with DefsFromArbiter announces
// no def databases and compares none until the first arbiter, admitted
// as the uploader, declares its own; from then on every joiner, the
// standby arbiter too, must match that declaration, refused as a host
// with those databases as content refuses; one that passed the handshake
// before the declaration is checked at its admission.
func TestRelayDefsFromArbiter(t *testing.T) {
	var logs syncbuf.Buffer
	h := startDeclaring(t, host.Config{}, host.Content{}, &logs)

	// Before the declaration: no databases announced, none compared, but
	// a list that names a type twice is no declaration.
	twice := dialRaw(t, h.Addr)
	twice.send(&wire.ClientProtocol{Protocol: wire.ProtocolVersion})
	twice.expect(wire.IDServerModList)
	twice.send(&wire.ClientDefs{Databases: wireSummaries([]defs.Summary{testDefs[0], testDefs[0]})})
	if d := twice.disconnected(); d.Reason != wire.ReasonGeneric || !strings.Contains(d.Message, "twice") {
		t.Fatalf("a declaration naming a type twice: %+v, want refused Generic", d)
	}
	early := dialRaw(t, h.Addr)
	early.send(&wire.ClientProtocol{Protocol: wire.ProtocolVersion})
	if ml := early.expect(wire.IDServerModList).(*wire.ServerModList); len(ml.Databases) != 0 || ml.GameVersion != "1.5" {
		t.Fatalf("before the declaration the mod list announces %+v, want game version 1.5 and no databases", ml)
	}
	early.send(&wire.ClientDefs{Databases: wireSummaries(otherDefs)})
	early.syncClockUntil(wire.IDServerDefsOK) // nothing to compare yet

	joinRelay(t, h.Addr, "Arbiter", true) // declares testDefs
	if !strings.Contains(logs.String(), `msg="def databases declared by the arbiter" player=`) {
		t.Fatalf("the host did not log the declaration:\n%s", logs.String())
	}

	// The joiner whose defs were kept unchecked is checked at admission.
	early.send(&wire.ClientUsername{Name: "Early"})
	if d := early.disconnected(); d.Reason != wire.ReasonDefs || !slices.Equal(d.DefStatuses, []uint8{0, 3, 1}) {
		t.Fatalf("a joiner kept before the declaration with other defs: %+v, want refused for Defs, statuses ok, hash differs, not found", d)
	}

	// Now the declaration is announced, sorted by type, and matched.
	c := dialRaw(t, h.Addr)
	c.send(&wire.ClientProtocol{Protocol: wire.ProtocolVersion})
	ml := c.expect(wire.IDServerModList).(*wire.ServerModList)
	want := wireSummaries(testDefs)
	slices.SortFunc(want, func(a, b wire.DefSummary) int { return strings.Compare(a.Type, b.Type) })
	if !slices.Equal(ml.Databases, want) {
		t.Fatalf("after the declaration the mod list announces %+v, want %+v", ml.Databases, want)
	}
	joinRelay(t, h.Addr, "Alice", false) // admitted: the same databases
	re := defsRefused(t, h.Addr, "Mallory", otherDefs, nil)
	if got := detailTypes(t, re); !slices.Equal(got, []string{"TerrainDef"}) {
		t.Errorf("the refusal's detail describes %v, want the declared TerrainDef (SoundDef is not the host's)", got)
	}
	standby := defsRefused(t, h.Addr, "Standby", otherDefs, relaySecret)

	// The same refusal as a relay host given those databases as content
	// (summaries only here, so without a detail to compare).
	var logs2 syncbuf.Buffer
	h2 := startRelay(t, host.Config{}, &logs2)
	joinRelay(t, h2.Addr, "Arbiter", true)
	same := defsRefused(t, h2.Addr, "Mallory", otherDefs, nil)
	if re.Message != same.Message || !slices.Equal(re.Statuses, same.Statuses) || !slices.Equal(standby.Statuses, same.Statuses) {
		t.Errorf("refused with %q %v (standby %v); a host with those databases as content says %q %v",
			re.Message, re.Statuses, standby.Statuses, same.Message, same.Statuses)
	}
}

// TestRelayDefsFromArbiterResume: the declared databases go into the
// session's save, and a session resumed from it takes them as its
// declaration at once: the mod list announces them and a joiner that
// differs is refused before any arbiter has come.
func TestRelayDefsFromArbiterResume(t *testing.T) {
	var logs syncbuf.Buffer
	path := filepath.Join(t.TempDir(), "relay.lhsave")
	h := startDeclaring(t, host.Config{Save: host.SaveConfig{Path: path, Every: -1}}, host.Content{}, &logs)
	joinRelay(t, h.Addr, "Arbiter", true) // returns once its world is the session's
	h.Stop(t)                             // the final save

	f, err := saves.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	var saved []defs.Summary
	for _, d := range f.Meta.Databases {
		saved = append(saved, defs.Summary{Type: d.Type, Count: d.Count, Hash: d.Hash})
	}
	want := slices.Clone(testDefs)
	slices.SortFunc(want, func(a, b defs.Summary) int { return strings.Compare(a.Type, b.Type) })
	if !slices.Equal(saved, want) {
		t.Fatalf("the save records databases %+v, want the declaration %+v", saved, want)
	}
	body, err := f.ReadBody()
	if err != nil {
		t.Fatal(err)
	}

	var logs2 syncbuf.Buffer
	h2 := startDeclaring(t, host.Config{Relay: host.RelayConfig{Resume: body}}, host.Content{Databases: saved}, &logs2)
	re := defsRefused(t, h2.Addr, "Mallory", otherDefs, nil)
	if got := detailTypes(t, re); !slices.Equal(got, []string{"TerrainDef"}) {
		t.Errorf("the resumed session's refusal describes %v, want TerrainDef", got)
	}
	joinRelay(t, h2.Addr, "Arbiter", true)
	joinRelay(t, h2.Addr, "Alice", false)
	if strings.Contains(logs2.String(), "declared by the arbiter") {
		t.Errorf("the resumed session took a declaration again:\n%s", logs2.String())
	}
}
