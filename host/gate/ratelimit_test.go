package gate

import (
	"testing"
	"time"
)

func TestRateLimiter(t *testing.T) {
	l := NewConnRate(2, 3)
	t0 := time.Unix(1000, 0)
	for i := 0; i < 3; i++ {
		if !l.Allow("10.0.0.1", t0) {
			t.Fatalf("attempt %d of the burst refused", i)
		}
	}
	if l.Allow("10.0.0.1", t0) {
		t.Fatal("fourth attempt at once allowed")
	}
	if !l.Allow("10.0.0.2", t0) {
		t.Fatal("another address shares the bucket")
	}
	if !l.Allow("10.0.0.1", t0.Add(500*time.Millisecond)) {
		t.Fatal("no token after half a second at 2/s")
	}
	if l.Allow("10.0.0.1", t0.Add(500*time.Millisecond)) {
		t.Fatal("two tokens after half a second at 2/s")
	}
	// Idle addresses are forgotten.
	l.Allow("10.0.0.3", t0.Add(time.Hour))
	if n := l.Len(); n != 1 {
		t.Fatalf("%d addresses tracked after an hour, want 1", n)
	}
	var off *ConnRate = NewConnRate(-1, 0)
	if !off.Allow("x", t0) {
		t.Fatal("disabled limiter refused")
	}
}
