package main

import (
	"os"
	"syscall"
)

// peakKiB is a finished child's peak RSS; Linux reports it in KiB.
func peakKiB(ps *os.ProcessState) (int64, bool) {
	ru, ok := ps.SysUsage().(*syscall.Rusage)
	if !ok {
		return 0, false
	}
	return ru.Maxrss, true
}
