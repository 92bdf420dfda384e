package host_test

import (
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"github.com/lockhost/lockhost/host"
	"github.com/lockhost/lockhost/join"
	"github.com/lockhost/lockhost/lockstep/locksteptest"
	"github.com/lockhost/lockhost/testing/syncbuf"
	"github.com/lockhost/lockhost/testing/testkit"
	"github.com/lockhost/lockhost/wire"
)

// TestJSONLogLines checks the logs an operator's tools read: every line is
// JSON; a join is one "player joined" line with every phase's time; a
// refusal is one "client refused" line with the reason and the remote
// address; the password appears nowhere.
func TestJSONLogLines(t *testing.T) {
	const secret = "open sesame"
	var buf syncbuf.Buffer
	logger := slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	h := startHost(t, host.Config{Logger: logger, Admission: host.AdmissionConfig{Password: []byte(secret)}}, locksteptest.New(2, 64))
	startJoiner(t, h.addr, "Alice", func(c *join.Config) { c.Password = []byte(secret) })
	if _, re := joinWith(t, h.addr, "Bob", func(c *join.Config) { c.Password = []byte("open sesame!") }); re == nil || re.Reason != wire.ReasonBadPassword {
		t.Fatalf("wrong password: %v", re)
	}
	testkit.WaitFor(t, "Alice's join line", func() bool { return strings.Contains(buf.String(), `"player joined"`) })

	var joined, refused []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("log line is not JSON: %q: %v", line, err)
		}
		if strings.Contains(line, secret) {
			t.Errorf("the password is in a log line: %s", line)
		}
		switch rec["msg"] {
		case "player joined":
			joined = append(joined, rec)
		case "client refused":
			refused = append(refused, rec)
		}
	}
	if len(joined) != 1 || joined[0]["name"] != "Alice" {
		t.Fatalf("join lines %v, want one for Alice", joined)
	}
	for _, key := range append([]string{"total_ms", "remote", "bytes"}, phaseKeys()...) {
		if _, ok := joined[0][key]; !ok {
			t.Errorf("join line lacks %s: %v", key, joined[0])
		}
	}
	if len(refused) != 1 || refused[0]["reason"] != wire.ReasonBadPassword.String() || refused[0]["remote"] == "" || refused[0]["name"] != "Bob" {
		t.Fatalf("refusal lines %v, want one for Bob with reason and remote address", refused)
	}
}

func phaseKeys() []string {
	var keys []string
	for _, p := range host.JoinPhases {
		keys = append(keys, p+"_ms")
	}
	return keys
}

// TestJoinPointBuiltIsDebug: the host builds a join point every few
// seconds in the background; at the default INFO level that is no log
// line (it filled half of a long session's log), at DEBUG it is one.
func TestJoinPointBuiltIsDebug(t *testing.T) {
	for _, level := range []slog.Level{slog.LevelInfo, slog.LevelDebug} {
		var buf syncbuf.Buffer
		logger := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: level}))
		h := startHost(t, host.Config{Logger: logger}, locksteptest.New(1, 64))
		// A joiner is sent a join point once it is built and logged.
		startJoiner(t, h.addr, "Alice")
		if h.srv.Overview().Stats.Built == 0 {
			t.Fatal("no join point built")
		}
		if got, want := strings.Contains(buf.String(), `msg="join point built"`), level == slog.LevelDebug; got != want {
			t.Errorf("at %v: a join point built line: %v, want %v\n%s", level, got, want, buf.String())
		}
	}
}
