package main

import (
	"context"
	"strings"
	"testing"

	"github.com/lockhost/lockhost/cmd/internal/cliutil"
	"github.com/lockhost/lockhost/game/colony"
	gamecontent "github.com/lockhost/lockhost/game/content"
	"github.com/lockhost/lockhost/join"
	"github.com/lockhost/lockhost/testing/testkit"
)

// startCutter relays to target and cuts the first connection after
// budget bytes from the host, as a link that drops mid-download.
func startCutter(t *testing.T, target string, budget int64) string {
	t.Helper()
	r := testkit.StartRelay(t, target)
	r.CutAfter(0, budget)
	return r.Addr()
}

// TestJoinRetriesDuringDownload: the join tool whose link drops during the
// download says so in one sentence, rejoins with its session token and
// reaches WorldReady; with --no-reconnect it exits with the network code.
func TestJoinRetriesDuringDownload(t *testing.T) {
	b, err := gamecontent.Load(nil, "")
	if err != nil {
		t.Fatal(err)
	}
	addr := serveBundle(t, b)
	probe, err := join.Join(context.Background(), join.Config{Addr: addr, Name: "Probe", Databases: b.Summary(), MapLoader: colony.MapLoader(b.Content)})
	if err != nil {
		t.Fatal(err)
	}
	cut := 2<<10 + int64(probe.Timings().Bytes)/2
	probe.Close()

	code, out, errOut := runJoin(t, startCutter(t, addr, cut), "--name", "Flaky", "--exit-after-ready", "-q")
	if code != cliutil.ExitOK || !strings.Contains(out, "WorldReady tick=") {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	for _, want := range []string{"connection lost during the download (", "); rejoining with the session token", "reconnecting in 1s"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("standard error lacks %q:\n%s", want, errOut)
		}
	}
	code, _, errOut = runJoin(t, startCutter(t, addr, cut), "--name", "Gone", "--exit-after-ready", "-q", "--no-reconnect")
	if code != cliutil.ExitNetwork || strings.Contains(errOut, "reconnecting") {
		t.Fatalf("--no-reconnect: exit %d, want %d without retrying\n%s", code, cliutil.ExitNetwork, errOut)
	}
}
