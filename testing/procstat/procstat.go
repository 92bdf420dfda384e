// Package procstat reads a process's CPU time and memory from Linux's
// /proc, for the benchmarks in scripts/, and builds a tool of this
// module for them and for the tests that run the real binaries.
package procstat

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// CPU is the process's user plus system CPU time so far (0 if unknown).
func CPU(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// The fields after the command name, which is in parentheses.
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+2:]))
	if len(f) < 13 {
		return 0
	}
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * time.Second / 100 // clock ticks of 1/100 s
}

// PeakRSS is the process's peak resident set (VmHWM) in KiB (0 if unknown).
func PeakRSS(pid int) int64 { return statusKiB(pid, "VmHWM:") }

// RSS is the process's current resident set (VmRSS) in KiB (0 if unknown).
func RSS(pid int) int64 { return statusKiB(pid, "VmRSS:") }

// statusKiB reads one "Field:  N kB" line of /proc/PID/status.
func statusKiB(pid int, field string) int64 {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), field); ok {
			if f := strings.Fields(v); len(f) > 0 {
				kb, _ := strconv.ParseInt(f[0], 10, 64)
				return kb
			}
		}
	}
	return 0
}
