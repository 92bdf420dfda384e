package syncbuf

import (
	"fmt"
	"strings"
	"sync"
	"testing"
)

// TestConcurrent writes from many goroutines while reading (run under
// -race): every line arrives whole.
func TestConcurrent(t *testing.T) {
	var b Buffer
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 100 {
				fmt.Fprintf(&b, "g%d line %d\n", g, i)
				_ = b.String()
			}
		})
	}
	wg.Wait()
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if len(lines) != 800 {
		t.Fatalf("%d lines, want 800", len(lines))
	}
	for _, l := range lines {
		var g, i int
		if n, err := fmt.Sscanf(l, "g%d line %d", &g, &i); n != 2 || err != nil {
			t.Fatalf("torn line %q", l)
		}
	}
}
