//go:build !linux

package main

import "os"

// peakKiB is only implemented for Linux, whose unit it assumes.
func peakKiB(*os.ProcessState) (int64, bool) { return 0, false }
