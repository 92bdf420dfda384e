//go:build unix

package main

import (
	"os"
	"syscall"
)

// maxRSS is a finished child's peak resident set as getrusage reports it
// (KiB on Linux).
func maxRSS(ps *os.ProcessState) int64 {
	if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
		return int64(ru.Maxrss)
	}
	return 0
}
