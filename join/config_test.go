package join_test

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/lockhost/lockhost/join"
	"github.com/lockhost/lockhost/lockstep/locksteptest"
)

// TestDefaultsFromDefaultConfig: a zero Config's defaults are exactly
// DefaultConfig, a set field is kept, and a negative timeout (no limit)
// is kept rather than replaced by the default.
func TestDefaultsFromDefaultConfig(t *testing.T) {
	d := join.DefaultConfig()
	got := join.Config{}.Defaults()
	if got.DialTimeout != d.DialTimeout || got.HandshakeTimeout != d.HandshakeTimeout || got.ReadyTimeout != d.ReadyTimeout ||
		got.HostTimeout != d.HostTimeout || got.MaxPayload != d.MaxPayload || got.MaxRaw != d.MaxRaw ||
		got.MaxRawTotal != d.MaxRawTotal || got.MaxFrame != d.MaxFrame || got.Logger != d.Logger {
		t.Fatalf("zero config's defaults %+v, want DefaultConfig %+v", got, d)
	}
	if d.DialTimeout <= 0 || d.HandshakeTimeout <= 0 || d.ReadyTimeout <= 0 || d.HostTimeout <= 0 || d.MaxPayload == 0 || d.MaxFrame == 0 {
		t.Fatalf("DefaultConfig leaves a limit unset: %+v", d)
	}
	set := join.Config{HostTimeout: 3 * time.Second, ReadyTimeout: -1, MaxRaw: 5}.Defaults()
	if set.HostTimeout != 3*time.Second || set.ReadyTimeout != -1 || set.MaxRaw != 5 {
		t.Fatalf("set fields changed by Defaults: host %v ready %v raw %d", set.HostTimeout, set.ReadyTimeout, set.MaxRaw)
	}
}

// TestNegativeDialTimeoutIsNoLimit: a dial under a negative DialTimeout
// gets a context without a deadline, where the default gives one.
func TestNegativeDialTimeoutIsNoLimit(t *testing.T) {
	for _, tc := range []struct {
		timeout      time.Duration
		wantDeadline bool
	}{{0, true}, {time.Second, true}, {-1, false}} {
		hasDeadline := make(chan bool, 1)
		cfg := join.Config{Addr: "h:1", Name: "Alice", Loader: locksteptest.Load, DialTimeout: tc.timeout,
			Dial: func(ctx context.Context, _ string) (net.Conn, error) {
				_, ok := ctx.Deadline()
				hasDeadline <- ok
				return nil, context.Canceled
			}}
		if _, err := join.Join(context.Background(), cfg); err == nil {
			t.Fatal("join succeeded with a dial that fails")
		}
		if got := <-hasDeadline; got != tc.wantDeadline {
			t.Errorf("DialTimeout %v: dial context has a deadline %v, want %v", tc.timeout, got, tc.wantDeadline)
		}
	}
}
