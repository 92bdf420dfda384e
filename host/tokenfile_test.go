package host_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/lockhost/lockhost/host"
	"github.com/lockhost/lockhost/host/roster"
	"github.com/lockhost/lockhost/join"
	"github.com/lockhost/lockhost/lockstep/locksteptest"
	"github.com/lockhost/lockhost/saves"
	"github.com/lockhost/lockhost/testing/hosttest"
	"github.com/lockhost/lockhost/testing/testkit"
	"github.com/lockhost/lockhost/wire"
)

// TestTokensSurviveRestart: the session tokens are kept beside the save
// (owner-only, hashed) and a host that loads the world from that save
// takes them back: a player rejoins with its token as the same player ID
// and faction, and a newcomer gets an ID above every returning player's.
// A host that starts a new world at the save discards them.
func TestTokensSurviveRestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "colony"+saves.Ext)
	content := host.Content{GameVersion: "1.5", Mods: []string{"lockhost.core"}, Databases: testDefs}
	cfg := host.Config{Factions: roster.FactionsPerPlayer, TickRate: 200, Save: host.SaveConfig{Path: path, Every: -1}}
	ctx := context.Background()

	h1 := hosttest.Start(t, cfg, content, locksteptest.New(1, 64))
	alice := hosttest.Join(t, joinCfg(h1.Addr, "Alice", newHashLog()))
	hosttest.Join(t, joinCfg(h1.Addr, "Bob", newHashLog()))
	token, _ := alice.Session.Token()
	first := alice.Session.Info()
	tokens := saves.TokensPath(path)
	testkit.WaitFor(t, "both tokens kept", func() bool {
		tk, err := saves.ReadTokens(tokens)
		return err == nil && len(tk.Players) == 2
	})
	raw, err := os.ReadFile(tokens)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(raw, []byte(base64.StdEncoding.EncodeToString(token))) {
		t.Fatal("the tokens file holds a token itself, not its hash")
	}
	if st, err := os.Stat(tokens); err != nil {
		t.Fatal(err)
	} else if runtime.GOOS != "windows" && st.Mode().Perm() != 0o600 {
		t.Fatalf("tokens file mode %v, want 0600", st.Mode().Perm())
	}
	h1.Stop(t)

	resumed := cfg
	resumed.Save.Resumed = true
	h2 := hosttest.Start(t, resumed, content, locksteptest.New(1, 64))
	back := joinCfg(h2.Addr, "Alice", newHashLog())
	back.Token = token
	again := hosttest.Join(t, back)
	if got := again.Session.Info(); got.PlayerID != first.PlayerID || got.Faction != first.Faction {
		t.Fatalf("rejoined as player %d faction %d, was %d faction %d", got.PlayerID, got.Faction, first.PlayerID, first.Faction)
	}
	carol := hosttest.Join(t, joinCfg(h2.Addr, "Carol", newHashLog()))
	if id := carol.Session.Info().PlayerID; id <= 2 {
		t.Fatalf("a newcomer got player ID %d, taken before the restart", id)
	}
	token2, _ := again.Session.Token()
	testkit.WaitFor(t, "the new tokens kept", func() bool {
		tk, err := saves.ReadTokens(tokens)
		return err == nil && len(tk.Players) == 3
	})
	h2.Stop(t)

	h3 := hosttest.Start(t, cfg, content, locksteptest.New(1, 64)) // a new world at the save
	stale := joinCfg(h3.Addr, "Alice", newHashLog())
	stale.Token = token2
	_, err = join.Join(ctx, stale)
	var re *join.RejectedError
	if !errors.As(err, &re) || re.Reason != wire.ReasonBadToken {
		t.Fatalf("a token of the old world on a new one: %v, want BadToken", err)
	}
}
