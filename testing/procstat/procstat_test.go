package procstat

import (
	"os"
	"testing"
	"time"
)

// spin is where TestSelf burns CPU (a package variable, so the loop is
// not optimised away).
var spin int

func TestSelf(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc here")
	}
	// Burn CPU until the count moves: counted in CPU time, not wall time,
	// since a loaded machine may not run this process for a while.
	for start := time.Now(); CPU(os.Getpid()) <= 0; {
		if time.Since(start) > time.Minute {
			t.Fatal("a minute of spinning and no CPU time counted")
		}
		for i := 0; i < 1_000_000; i++ {
			spin++
		}
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
