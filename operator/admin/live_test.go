package admin_test

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorcon/rcon"
	"github.com/lockhost/lockhost/host"
	"github.com/lockhost/lockhost/join"
	"github.com/lockhost/lockhost/lockstep/locksteptest"
	"github.com/lockhost/lockhost/operator/admin"
	lhrcon "github.com/lockhost/lockhost/operator/rcon"
	"github.com/lockhost/lockhost/testing/hosttest"
	"github.com/lockhost/lockhost/testing/testkit"
	"github.com/lockhost/lockhost/wire"
)

// startLive serves a small test game for one test, ticking fast.
func startLive(t *testing.T, cfg host.Config) *hosttest.Host {
	t.Helper()
	cfg.TickRate = 200
	return hosttest.Start(t, cfg, host.Content{GameVersion: "1.5", Mods: []string{"lockhost.core"}}, locksteptest.New(2, 64))
}

// player is a real joiner: its notices, the host's chat lines (as
// "[host] text") and how its session ended.
type player struct {
	sess    *join.Session
	mu      sync.Mutex
	notices []string
	ended   chan error
}

func (p *player) saw(text string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, n := range p.notices {
		if strings.Contains(n, text) {
			return true
		}
	}
	return false
}

func joinCfg(addr, name string) join.Config {
	return join.Config{Addr: addr, Name: name, Loader: locksteptest.Load, Logger: testkit.Quiet()}
}

// joinLive joins and runs a player until the test ends, or returns the
// host's refusal.
func joinLive(t *testing.T, cfg join.Config) (*player, *join.RejectedError) {
	t.Helper()
	p := &player{ended: make(chan error, 1)}
	cfg.Notice = func(text string) {
		p.mu.Lock()
		p.notices = append(p.notices, text)
		p.mu.Unlock()
	}
	cfg.Chat = func(c join.ChatLine) {
		if c.FromHost() {
			p.mu.Lock()
			p.notices = append(p.notices, "[host] "+c.Text)
			p.mu.Unlock()
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	jctx, jcancel := context.WithTimeout(ctx, 30*time.Second)
	defer jcancel()
	s, err := join.Join(jctx, cfg)
	if err != nil {
		cancel()
		var re *join.RejectedError
		if !errors.As(err, &re) {
			t.Fatalf("join %s: %v", cfg.Name, err)
		}
		return nil, re
	}
	p.sess = s
	go func() { p.ended <- s.Run(ctx) }()
	t.Cleanup(func() { cancel(); s.Close(); <-p.ended })
	return p, nil
}

// endedWith waits for p's session to end and checks the host's reason and
// that the message shows text.
func (p *player) endedWith(t *testing.T, r wire.Reason, text string) {
	t.Helper()
	select {
	case err := <-p.ended:
		p.ended <- err // for the cleanup
		var re *join.RejectedError
		if !errors.As(err, &re) || re.Reason != r || !strings.Contains(re.Message, text) {
			t.Fatalf("session ended with %v, want %v showing %q", err, r, text)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("session still running, want it ended with %v", r)
	}
}

// way runs one command line and returns its output.
type way func(t *testing.T, line string) string

func consoleWay(l *hosttest.Host) way {
	return func(t *testing.T, line string) string {
		var out strings.Builder
		if err := admin.RunConsole(context.Background(), l.Server, admin.ByConsole, strings.NewReader(line+"\n"), &out); err != nil {
			t.Fatalf("console: %v", err)
		}
		return out.String()
	}
}

func rconWay(t *testing.T, l *hosttest.Host) way {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	rs, err := lhrcon.NewServer(lhrcon.Config{Password: []byte("pw"), Logger: testkit.Quiet(),
		Exec: func(by, line string) string { return admin.Exec(l.Server, by, line) }})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = rs.Serve(ctx, ln) }()
	t.Cleanup(func() { cancel(); <-done })
	c, err := rcon.Dial(ln.Addr().String(), "pw", rcon.SetDeadline(30*time.Second))
	if err != nil {
		t.Fatalf("rcon dial: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return func(t *testing.T, line string) string {
		out, err := c.Execute(line)
		if err != nil {
			t.Fatalf("rcon %q: %v", line, err)
		}
		return out
	}
}

func apiWay(l *hosttest.Host) way {
	return func(_ *testing.T, line string) string { return admin.Exec(l.Server, admin.ByAPI, line) }
}

func expect(t *testing.T, run way, line string, want ...string) string {
	t.Helper()
	out := run(t, line)
	for _, w := range want {
		if !strings.Contains(out, w) {
			t.Fatalf("%q gave %q, want it to show %q", line, out, w)
		}
	}
	return out
}

// TestEveryCommandEveryWay drives every admin command through the console,
// RCON (a client module nobody here wrote) and Exec, against a live host
// with real joiners.
func TestEveryCommandEveryWay(t *testing.T) {
	for _, tc := range []struct {
		name string
		way  func(t *testing.T, l *hosttest.Host) way
	}{
		{"console", func(_ *testing.T, l *hosttest.Host) way { return consoleWay(l) }},
		{"rcon", rconWay},
		{"exec", func(_ *testing.T, l *hosttest.Host) way { return apiWay(l) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			l := startLive(t, host.Config{
				Save:      host.SaveConfig{Path: filepath.Join(dir, "colony.lhsave"), Every: -1},
				Admission: host.AdmissionConfig{BanFile: filepath.Join(dir, host.BansFileName)},
			})
			run := tc.way(t, l)
			everyCommand(t, l, run, dir)
		})
	}
}

func everyCommand(t *testing.T, l *hosttest.Host, run way, dir string) {
	alice, _ := joinLive(t, joinCfg(l.Addr, "Alice"))
	bob, _ := joinLive(t, joinCfg(l.Addr, "Bob"))
	expect(t, run, "help", "players", "kick NAME [reason]", "ban NAME|IP [duration] [reason]", "unban", "bans", "say TEXT",
		"save [NAME]", "pause", "resume", "speed N", "shutdown [delay]")
	expect(t, run, "help ban", "ban NAME|IP", "7d")
	expect(t, run, "players", "2 online", "Alice", "Bob", "127.0.0.1:")

	expect(t, run, "say hello\tthere", "said: hello")
	testkit.WaitFor(t, "Bob to see the admin's message", func() bool { return bob.saw("[host] hello there") })

	speedIs := func(n int) func() bool { return func() bool { return l.Server.Overview().Speed == n } }
	expect(t, run, "speed 2", "speed set to 2")
	testkit.WaitFor(t, "speed 2", speedIs(2))
	expect(t, run, "pause", "paused")
	testkit.WaitFor(t, "the pause", speedIs(0))
	testkit.WaitFor(t, "Alice to be told of the pause", func() bool { return alice.saw("paused") })
	expect(t, run, "resume", "resumed at speed 2")
	testkit.WaitFor(t, "speed 2 again", speedIs(2))
	expect(t, run, "speed 9", "error:")

	saveNamed(t, run, dir)

	expect(t, run, "kick Bob being rude", "kicked Bob")
	bob.endedWith(t, wire.ReasonKicked, "being rude")
	testkit.WaitFor(t, "Alice to be told why Bob left", func() bool { return alice.saw("Bob left the session (kicked by the host: being rude).") })
	expect(t, run, "kick Nobody", "error:", "Nobody")

	token, _ := alice.sess.Token()
	expect(t, run, "ban alice 1h spamming", "banned alice until", "spamming", "disconnected Alice")
	alice.endedWith(t, wire.ReasonBanned, "spamming")
	if _, re := joinLive(t, joinCfg(l.Addr, "Alice")); re == nil || re.Reason != wire.ReasonBanned {
		t.Fatalf("banned Alice joined again: %v", re)
	}
	rejoin := joinCfg(l.Addr, "Alice")
	rejoin.Token = token
	if _, re := joinLive(t, rejoin); re == nil || re.Reason != wire.ReasonBanned {
		t.Fatalf("banned Alice rejoined with her token: %v", re)
	}
	// A player who left before the ban may not come back on its token.
	dave, _ := joinLive(t, joinCfg(l.Addr, "Dave"))
	daveToken, _ := dave.sess.Token()
	dave.sess.Close()
	testkit.WaitFor(t, "Dave to be gone", func() bool {
		ps, _ := l.Server.Players()
		return len(ps) == 0
	})
	expect(t, run, "ban Dave", "banned Dave for good")
	rejoin = joinCfg(l.Addr, "Dave")
	rejoin.Token = daveToken
	if _, re := joinLive(t, rejoin); re == nil || re.Reason != wire.ReasonBanned {
		t.Fatalf("Dave, banned while away, rejoined with his token: %v", re)
	}
	expect(t, run, "unban dave", "unbanned")
	expect(t, run, "bans", "1 banned", "alice until", "spamming")
	expect(t, run, "unban Alice", "unbanned Alice")
	expect(t, run, "bans", "no bans")
	if _, re := joinLive(t, joinCfg(l.Addr, "Alice")); re != nil {
		t.Fatalf("unbanned Alice refused: %v", re)
	}

	expect(t, run, "ban 127.0.0.1 2d", "banned 127.0.0.1 until", "disconnected Alice")
	if _, re := joinLive(t, joinCfg(l.Addr, "Carol")); re == nil || re.Reason != wire.ReasonBanned {
		t.Fatalf("a player from a banned address joined: %v", re)
	}
	expect(t, run, "unban 127.0.0.1", "unbanned")
	expect(t, run, "ban 10.0.0.0/8", "error:")
	expect(t, run, "frobnicate", "error: unknown command")

	carol, _ := joinLive(t, joinCfg(l.Addr, "Carol"))
	expect(t, run, "shutdown 1s", "shutting down in 1s")
	testkit.WaitFor(t, "Carol to be told", func() bool { return carol.saw("shuts down in 1s") })
	carol.endedWith(t, wire.ReasonServerClosing, "")
	l.Wait(t)
}

// saveNamed: save writes the host's save, or NAME.lhsave beside it; a
// path, "..", or a name whose file is not a save is refused, and the file
// is left as it was.
func saveNamed(t *testing.T, run way, dir string) {
	t.Helper()
	own := filepath.Join(dir, "colony.lhsave")
	expect(t, run, "save", "saved "+own)
	file := filepath.Join(dir, "now.lhsave")
	expect(t, run, "save now", "saved "+file)
	if st, err := os.Stat(file); err != nil || st.Size() == 0 {
		t.Fatalf("save wrote nothing: %v", err)
	}
	expect(t, run, "save now.lhsave", "saved "+file) // a save is replaced
	notes := filepath.Join(dir, "notes.lhsave")
	if err := os.WriteFile(notes, []byte("my notes\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(t.TempDir(), "notes.txt")
	if err := os.WriteFile(outside, []byte("my notes\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for line, want := range map[string]string{
		"save " + outside:   "error: save \"" + outside + "\": give a plain name",
		"save ../colony":    "plain name",
		"save sub/x":        "plain name",
		`save sub\x`:        "plain name",
		"save .hidden":      "plain name",
		"save notes":        "is not a lockhost save; it is not replaced",
		"save notes.lhsave": "is not a lockhost save; it is not replaced",
	} {
		expect(t, run, line, "error:", want)
	}
	for _, f := range []string{notes, outside} {
		if b, err := os.ReadFile(f); err != nil || string(b) != "my notes\n" {
			t.Fatalf("%s changed: %q, %v", f, b, err)
		}
	}
}
