package procstat

import (
	"os"
	"testing"
	"time"
)

func TestSelf(t *testing.T) {
	// Burn a little CPU so the count is not zero.
	x := 0
	for start := time.Now(); time.Since(start) < 50*time.Millisecond; {
		x++
	}
	if CPU(os.Getpid()) <= 0 {
		t.Skip("no /proc here")
	}
	if PeakRSS(os.Getpid()) <= 0 {
		t.Fatal("no peak RSS for this process")
	}
	if rss := RSS(os.Getpid()); rss <= 0 || rss > PeakRSS(os.Getpid()) {
		t.Fatalf("RSS %d KiB, peak %d KiB", rss, PeakRSS(os.Getpid()))
	}
	if CPU(-1) != 0 || PeakRSS(-1) != 0 || RSS(-1) != 0 {
		t.Fatal("a process that does not exist has figures")
	}
}
