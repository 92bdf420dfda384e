//go:build unix

package host_test

import (
	"syscall"
	"testing"
)

// needDescriptors skips the test unless the process may open n files.
func needDescriptors(t *testing.T, n uint64) {
	t.Helper()
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		t.Skipf("descriptor limit unknown: %v", err)
	}
	if rl.Cur < n {
		t.Skipf("the descriptor limit (ulimit -n) is %d; this test needs %d", rl.Cur, n)
	}
}
