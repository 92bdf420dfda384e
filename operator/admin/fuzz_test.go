package admin_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/lockhost/lockhost/host"
	"github.com/lockhost/lockhost/operator/admin"
)

// fakeHost answers every admin method without a session, recording the
// arguments it was given.
type fakeHost struct{ calls []string }

func (f *fakeHost) note(s string) { f.calls = append(f.calls, s) }

func (f *fakeHost) Players() ([]host.AdminPlayer, error) {
	f.note("players")
	return []host.AdminPlayer{{ID: 1, Name: "Alice", Status: "playing", Addr: "127.0.0.1:1"}}, nil
}

func (f *fakeHost) Kick(_, name, reason string) (host.AdminPlayer, error) {
	f.note("kick " + name + "|" + reason)
	return host.AdminPlayer{Name: name}, nil
}

func (f *fakeHost) Ban(_, target string, d time.Duration, reason string) (host.Ban, []string, error) {
	f.note("ban " + target + "|" + d.String() + "|" + reason)
	return host.Ban{Name: target, Reason: reason}, nil, nil
}

func (f *fakeHost) Unban(_, target string) ([]host.Ban, error) {
	f.note("unban " + target)
	return nil, errors.New("not banned")
}

func (f *fakeHost) Bans() []host.Ban { f.note("bans"); return nil }

func (f *fakeHost) Say(_, text string) error { f.note("say " + text); return nil }

func (f *fakeHost) SaveNow(_, name string) (host.SaveRecord, error) {
	f.note("save " + name)
	return host.SaveRecord{Path: name}, nil
}

func (f *fakeHost) Pause(string) error               { f.note("pause"); return nil }
func (f *fakeHost) Resume(string) (uint8, error)     { f.note("resume"); return 1, nil }
func (f *fakeHost) SetSpeed(_ string, n uint8) error { f.note(fmt.Sprint("speed ", n)); return nil }
func (f *fakeHost) Shutdown(_ string, d time.Duration) error {
	f.note("shutdown " + d.String())
	return nil
}
func (f *fakeHost) ClearDeclaredDefs(string) (int, error) { f.note("cleardefs"); return 0, nil }

// TestArguments: each command hands the host what the line says.
func TestArguments(t *testing.T) {
	for line, want := range map[string]string{
		"kick Bob":                    "kick Bob|",
		"KICK  Bob   too   loud ":     "kick Bob|too   loud",
		"ban Bob":                     "ban Bob|0s|",
		"ban Bob 12h":                 "ban Bob|12h0m0s|",
		"ban 10.1.2.3 7d spam, spam":  "ban 10.1.2.3|168h0m0s|spam, spam",
		"ban Bob griefing the pantry": "ban Bob|0s|griefing the pantry",
		"say  hello   world":          "say hello   world",
		"save":                        "save ",
		"save other":                  "save other",
		"shutdown":                    "shutdown 0s",
		"shutdown 90s":                "shutdown 1m30s",
		"unban Bob":                   "unban Bob",
		"cleardefs":                   "cleardefs",
	} {
		f := &fakeHost{}
		admin.Exec(f, admin.ByAPI, line)
		if len(f.calls) != 1 || f.calls[0] != want {
			t.Errorf("%q: calls %q, want %q", line, f.calls, want)
		}
	}
	for _, line := range []string{"", "kick", "speed", "speed 1 2", "unban a b", "ban Bob 5x", "shutdown soon", "save a b", "nope"} {
		f := &fakeHost{}
		if out := admin.Exec(f, admin.ByAPI, line); !strings.HasPrefix(out, "error: ") || len(f.calls) != 0 {
			t.Errorf("%q: %q, calls %q", line, out, f.calls)
		}
	}
}

// FuzzExec: any command line, as an RCON client may send, gets an answer
// and never a panic; a refused line reaches no host method.
func FuzzExec(f *testing.F) {
	for _, s := range []string{"players", "kick Bob rude", "ban 10.0.0.1 7d spam", "ban ::1", "say hi", "speed 3",
		"shutdown 30s", "help ban", "unban Bob", "save x.lhsave", "\x00\xff", strings.Repeat("a ", 600)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		h := &fakeHost{}
		out := admin.Exec(h, admin.ByRCON, line)
		if out == "" {
			t.Fatalf("%q: no answer", line)
		}
		if strings.HasPrefix(out, "error: ") && len(h.calls) > 0 && !strings.HasPrefix(h.calls[0], "unban") {
			t.Fatalf("%q: refused (%q) but called %q", line, out, h.calls)
		}
		if len(line) > admin.MaxLine && len(h.calls) > 0 {
			t.Fatalf("a line of %d bytes ran", len(line))
		}
	})
}
