package admin_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/lockhost/lockhost/host"
	"github.com/lockhost/lockhost/lockstep/locksteptest"
	"github.com/lockhost/lockhost/operator/admin"
	"github.com/lockhost/lockhost/testing/testkit"
	"github.com/lockhost/lockhost/wire"
)

// TestServerMethods drives every admin action through the Go API, the
// methods of host.Server, against a live host with real joiners.
func TestServerMethods(t *testing.T) {
	dir := t.TempDir()
	l := startLive(t, host.Config{
		Save:      host.SaveConfig{Path: filepath.Join(dir, "colony.lhsave"), Every: -1},
		Admission: host.AdmissionConfig{BanFile: filepath.Join(dir, host.BansFileName)},
	})
	srv, by := l.Server, admin.ByAPI
	alice, _ := joinLive(t, joinCfg(l.Addr, "Alice"))
	bob, _ := joinLive(t, joinCfg(l.Addr, "Bob"))

	ps, err := srv.Players()
	if err != nil || len(ps) != 2 || ps[0].Name != "Alice" || ps[1].Name != "Bob" || !strings.HasPrefix(ps[0].Addr, "127.0.0.1:") {
		t.Fatalf("players: %+v, %v", ps, err)
	}
	if err := srv.Say(by, "hi\x07 all\x1b"); err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, "the message without its control characters", func() bool { return alice.saw("[host] hi all") })
	if err := srv.Say(by, "\x00\x01 "); err == nil {
		t.Fatal("an empty message was said")
	}
	if err := srv.Say(by, "long "+strings.Repeat("é", host.MaxSayText)); err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, "the long message", func() bool { return alice.saw("[host] long é") })
	var long string
	alice.mu.Lock()
	for _, n := range alice.notices {
		if strings.HasPrefix(n, "[host] long") {
			long = n
		}
	}
	alice.mu.Unlock()
	if text := strings.TrimPrefix(long, "[host] "); len(text) > host.MaxSayText || !utf8.ValidString(text) {
		t.Fatalf("long message shown as %d bytes, valid UTF-8 %v", len(text), utf8.ValidString(text))
	}

	speedIs := func(n int) func() bool { return func() bool { return srv.Overview().Speed == n } }
	if err := srv.SetSpeed(by, 3); err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, "speed 3", speedIs(3))
	if err := srv.Pause(by); err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, "the pause", speedIs(0))
	if s, err := srv.Resume(by); err != nil || s != 3 {
		t.Fatalf("resume: %d, %v", s, err)
	}
	testkit.WaitFor(t, "speed 3 again", speedIs(3))
	if err := srv.SetSpeed(by, 4); err == nil {
		t.Fatal("speed 4 accepted")
	}

	file := filepath.Join(dir, "api.lhsave")
	rec, err := srv.SaveNow(by, "api")
	if err != nil || rec.Path != file || rec.Bytes == 0 || rec.Err != "" {
		t.Fatalf("save: %+v, %v", rec, err)
	}
	if _, err := os.Stat(file); err != nil {
		t.Fatal(err)
	}

	if p, err := srv.Kick(by, "BOB", "afk"); err != nil || p.Name != "Bob" {
		t.Fatalf("kick: %+v, %v", p, err)
	}
	bob.endedWith(t, wire.ReasonKicked, "afk")

	b, kicked, err := srv.Ban(by, "Alice", time.Hour, "cheating")
	if err != nil || len(kicked) != 1 || kicked[0] != "Alice" || b.Until.IsZero() || b.By != by {
		t.Fatalf("ban: %+v %v %v", b, kicked, err)
	}
	alice.endedWith(t, wire.ReasonBanned, "cheating")
	if _, _, err := srv.Ban(by, "not a name!", 0, ""); err == nil {
		t.Fatal("a ban of neither a name nor an address was made")
	}
	if _, _, err := srv.Ban(by, "::1", 0, ""); err != nil {
		t.Fatal(err)
	}
	if bans := srv.Bans(); len(bans) != 2 || bans[0].Name != "Alice" || bans[1].Addr != "::1" {
		t.Fatalf("bans: %+v", bans)
	}
	if gone, err := srv.Unban(by, "::1"); err != nil || len(gone) != 1 {
		t.Fatalf("unban: %v %v", gone, err)
	}
	if _, err := srv.Unban(by, "Zed"); err == nil {
		t.Fatal("unbanning someone not banned worked")
	}

	// The ban list survives a restart: a new host on the same file refuses
	// Alice.
	l2 := startLive(t, host.Config{Admission: host.AdmissionConfig{BanFile: filepath.Join(dir, host.BansFileName)}})
	if bans := l2.Server.Bans(); len(bans) != 1 || bans[0].Name != "Alice" || bans[0].Reason != "cheating" {
		t.Fatalf("bans after a restart: %+v", bans)
	}
	if _, re := joinLive(t, joinCfg(l2.Addr, "alice")); re == nil || re.Reason != wire.ReasonBanned {
		t.Fatalf("Alice after a restart: %v", re)
	}

	// Two says, speed, pause, resume, save, kick, two bans and an unban
	// so far (the refused ones are not actions).
	testkit.WaitFor(t, "10 admin actions counted", func() bool { return srv.Overview().Stats.AdminActions == 10 })
	if err := srv.Shutdown(by, 0); err != nil {
		t.Fatal(err)
	}
	l.Wait(t)
	if _, err := srv.Players(); err != host.ErrSessionOver {
		t.Fatalf("players after the end: %v", err)
	}
}

// TestDamagedBanFileRefused: a ban list that cannot be read stops the host
// rather than letting everyone in.
func TestDamagedBanFileRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), host.BansFileName)
	if err := os.WriteFile(path, []byte("[{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := host.New(host.Config{Logger: testkit.Quiet(), Admission: host.AdmissionConfig{BanFile: path}}, host.Content{}, locksteptest.New(1, 16)); err == nil ||
		!strings.Contains(err.Error(), "damaged") {
		t.Fatalf("damaged ban list: %v", err)
	}
}

// TestConsoleSession: one console reads several lines, skips blank ones and
// refuses an overlong one without stopping.
func TestConsoleSession(t *testing.T) {
	l := startLive(t, host.Config{})
	joinLive(t, joinCfg(l.Addr, "Alice"))
	in := "players\n\n   \n" + "say " + strings.Repeat("x", admin.MaxLine+10) + "\nbans\r\nhelp kick"
	var out strings.Builder
	if err := admin.RunConsole(context.Background(), l.Server, admin.ByConsole, strings.NewReader(in), &out); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	want := []string{"1 online:", "Alice", "error: command line over", "no bans", "kick NAME [reason]", "disconnect a player"}
	if len(lines) != len(want) {
		t.Fatalf("console wrote %q", out.String())
	}
	for i, w := range want {
		if !strings.Contains(lines[i], w) {
			t.Fatalf("line %d is %q, want %q in it", i+1, lines[i], w)
		}
	}
}

func TestParseDuration(t *testing.T) {
	for in, want := range map[string]time.Duration{"30s": 30 * time.Second, "90m": 90 * time.Minute, "7d": 7 * 24 * time.Hour, "1h30m": 90 * time.Minute} {
		if got, err := admin.ParseDuration(in); err != nil || got != want {
			t.Errorf("%q: %v, %v", in, got, err)
		}
	}
	for _, in := range []string{"", "0d", "-1h", "3x", "d", "0s", "99999999d"} {
		if _, err := admin.ParseDuration(in); err == nil {
			t.Errorf("%q accepted", in)
		}
	}
}
