package host_test

import (
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lockhost/lockhost/host"
	"github.com/lockhost/lockhost/join"
	"github.com/lockhost/lockhost/lockstep/locksteptest"
	"github.com/lockhost/lockhost/testing/syncbuf"
	"github.com/lockhost/lockhost/testing/testkit"
	"github.com/lockhost/lockhost/wire"
)

// chatLog collects the chat lines and notices one joiner receives.
type chatLog struct {
	mu      sync.Mutex
	lines   []join.ChatLine
	notices []string
}

func (c *chatLog) hook(cfg *join.Config) {
	cfg.Chat = func(l join.ChatLine) { c.mu.Lock(); c.lines = append(c.lines, l); c.mu.Unlock() }
	cfg.Notice = func(n string) { c.mu.Lock(); c.notices = append(c.notices, n); c.mu.Unlock() }
}

func (c *chatLog) has(want join.ChatLine) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Contains(c.lines, want)
}

func (c *chatLog) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.lines)
}

func (c *chatLog) noticed(sub string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.ContainsFunc(c.notices, func(n string) bool { return strings.Contains(n, sub) })
}

// TestChatRelayedToEveryone has a player chat with control characters in
// the line: every joiner, the speaker included, gets it from the host
// with the speaker's name and ID and without the control characters; the
// host's Say reaches everyone with the host as speaker; both lines are in
// the overview, the counters and the log.
func TestChatRelayedToEveryone(t *testing.T) {
	var logs syncbuf.Buffer
	h := startHost(t, host.Config{Logger: slog.New(slog.NewTextHandler(&logs, nil))}, locksteptest.New(1, 16))
	var aliceLog, bobLog chatLog
	alice := startJoiner(t, h.addr, "Alice", spectate, aliceLog.hook)
	startJoiner(t, h.addr, "Bob", spectate, bobLog.hook)

	if err := alice.sess.Chat("  hello\x1b[2J Bob\n \u202eevil "); err != nil {
		t.Fatal(err)
	}
	want := join.ChatLine{From: "Alice", PlayerID: alice.sess.Info().PlayerID, Text: "hello[2J Bob  evil"}
	testkit.WaitFor(t, "Alice's line at both joiners", func() bool { return aliceLog.has(want) && bobLog.has(want) })

	h.srv.Say("console", "the host\x07 restarts soon")
	fromHost := join.ChatLine{Text: "the host restarts soon"}
	testkit.WaitFor(t, "the host's line at both joiners", func() bool { return aliceLog.has(fromHost) && bobLog.has(fromHost) })

	o := h.srv.Overview()
	if len(o.Chat) != 2 || o.Chat[0].Text != fromHost.Text || o.Chat[0].By != "console" || o.Chat[0].Name != "" ||
		o.Chat[1].Name != "Alice" || o.Chat[1].Text != want.Text {
		t.Fatalf("overview chat %+v, want the host's line then Alice's, newest first", o.Chat)
	}
	if o.Stats.Chats != 2 {
		t.Fatalf("Stats.Chats = %d, want 2", o.Stats.Chats)
	}
	for _, line := range []string{`msg=chat player=` + strconv.Itoa(int(want.PlayerID)) + ` name=Alice text="hello[2J Bob  evil"`,
		`msg=chat from=host by=console text="the host restarts soon"`} {
		if !strings.Contains(logs.String(), line) {
			t.Errorf("the log lacks %q:\n%s", line, logs.String())
		}
	}
}

// TestChatRateAndLimits sends more lines than the chat budget allows at
// a rate that never refills within a test: the lines past the burst are
// refused with a notice to the speaker alone, counted, and the speaker
// stays. An over-long line ends nothing either: Session.Chat refuses it
// before it is sent.
func TestChatRateAndLimits(t *testing.T) {
	h := startHost(t, host.Config{Limits: host.LimitConfig{ChatRate: 1e-9, ChatBurst: 2}}, locksteptest.New(1, 16))
	var aliceLog, bobLog chatLog
	alice := startJoiner(t, h.addr, "Alice", spectate, aliceLog.hook)
	startJoiner(t, h.addr, "Bob", spectate, bobLog.hook)
	for i := range 4 {
		if err := alice.sess.Chat("line " + strconv.Itoa(i)); err != nil {
			t.Fatal(err)
		}
	}
	testkit.WaitFor(t, "two refusals counted", func() bool { return h.srv.Overview().Stats.ChatsRefused == 2 })
	testkit.WaitFor(t, "the refusal notice", func() bool { return aliceLog.noticed("Chat refused") })
	if bobLog.noticed("Chat refused") {
		t.Fatal("Bob was told of Alice's refusal")
	}
	if n := h.srv.Overview().Stats.Chats; n != 2 {
		t.Fatalf("%d lines relayed, want the burst of 2", n)
	}
	testkit.WaitFor(t, "both lines at Bob", func() bool { return bobLog.count() == 2 })
	if err := alice.sess.Chat(strings.Repeat("x", wire.MaxChatBytes+1)); err == nil {
		t.Fatal("an over-long line was accepted for sending")
	}
	since := time.Now()
	testkit.WaitFor(t, "a later overview that lists Alice", func() bool {
		o := h.srv.Overview()
		return o.At.After(since) && slices.ContainsFunc(o.Players, func(p host.PlayerView) bool { return p.Name == "Alice" })
	})
}
