package main

import (
	"errors"
	"fmt"
	"testing"

	"github.com/lockhost/lockhost/cmd/internal/cliutil"
	"github.com/lockhost/lockhost/join"
	"github.com/lockhost/lockhost/modsync"
)

// TestClassifyContentFaults: content a host sends that breaks its own
// offer (--fetch-content) is the host's fault, an exit 4 as for any
// protocol error, not the 1 of a bug or this machine failing.
func TestClassifyContentFaults(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want int
	}{
		{"a file that does not hash as the manifest says", fmt.Errorf("content sync: fetch Defs/A.xml: %w", modsync.ErrHashMismatch), cliutil.ExitNetwork},
		{"a path the cache refuses", fmt.Errorf("content sync: %w", modsync.ErrUnsafePath), cliutil.ExitNetwork},
		{"a manifest over a limit", fmt.Errorf("content sync: %w", &join.ProtocolError{Err: modsync.ErrLimit}), cliutil.ExitNetwork},
		{"a manifest other than the one offered", fmt.Errorf("content sync: %w", &join.ProtocolError{Err: errors.New("not the one the host offered")}), cliutil.ExitNetwork},
		{"this machine failing", fmt.Errorf("content sync: %w", errors.New("no space left on device")), cliutil.ExitFailure},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := classify(tc.err); got != tc.want {
				t.Errorf("classify(%v) = %d, want %d", tc.err, got, tc.want)
			}
		})
	}
}
