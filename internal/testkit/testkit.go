package testkit

import (
	"log/slog"
	"testing"
	"time"
)

// Quiet returns a logger that drops everything.
func Quiet() *slog.Logger { return slog.New(slog.DiscardHandler) }

// DefaultWait bounds WaitFor: long enough that only a hang reaches it on
// a loaded machine.
const DefaultWait = 20 * time.Second

// WaitFor polls cond until it holds, failing the test if DefaultWait
// passes first.
func WaitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	WaitWithin(t, DefaultWait, what, cond)
}

// WaitWithin polls cond until it holds, failing the test if d passes
// first. d bounds a hang, not a speed, so it should be generous.
func WaitWithin(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
