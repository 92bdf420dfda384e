package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"testing"
)

// TestSessionError checks that a session that failed during the run is
// reported and one ended by the end of the run is not.
func TestSessionError(t *testing.T) {
	ended := func() *bot { return &bot{} } // Run returned nil: its context ended
	cancelled := func() *bot { return &bot{errRun: fmt.Errorf("run: %w", context.Canceled)} }
	failed := func() *bot { return &bot{errRun: fmt.Errorf("read: %w", net.ErrClosed)} }

	if err := sessionError([]*bot{ended(), cancelled()}, ended()); err != nil {
		t.Errorf("sessions ended by the run's end: %v, want nil", err)
	}
	err := sessionError([]*bot{ended(), failed(), failed()}, ended())
	if err == nil || err.Error() != "bot 1: read: use of closed network connection" || !errors.Is(err, net.ErrClosed) {
		t.Errorf("bot 1 failed: %v, want bot 1's error", err)
	}
	if err := sessionError([]*bot{cancelled()}, failed()); err == nil || err.Error() != "watcher: read: use of closed network connection" {
		t.Errorf("the watcher failed: %v, want the watcher's error", err)
	}
}
