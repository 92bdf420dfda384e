package procstat

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/lockhost/lockhost/testing/syncbuf"
)

// StartUntil starts cmd, whose output the caller has pointed at log, for
// the rest of the test (interrupted and waited for when it ends), and
// waits up to within for log to match re, returning the match. The test
// fails if cmd exits first or the time passes, showing log.
func StartUntil(t testing.TB, cmd *exec.Cmd, log *syncbuf.Buffer, re *regexp.Regexp, within time.Duration) []string {
	t.Helper()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	t.Cleanup(func() { cmd.Process.Signal(os.Interrupt); <-done })
	name := filepath.Base(cmd.Path)
	for deadline := time.Now().Add(within); ; time.Sleep(20 * time.Millisecond) {
		if m := re.FindStringSubmatch(log.String()); m != nil {
			return m
		}
		select {
		case <-done:
			t.Fatalf("%s exited:\n%s", name, log.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: no %q after %v:\n%s", name, re, within, log.String())
		}
	}
}
