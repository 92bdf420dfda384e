package procstat

import (
	"os/exec"
	"regexp"
	"syscall"
	"testing"
	"time"

	"github.com/lockhost/lockhost/testing/syncbuf"
)

// TestStartUntil runs a shell that prints a line and then waits: the
// match is the line's, and the process is still running once it is read.
func TestStartUntil(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	var log syncbuf.Buffer
	cmd := exec.Command(sh, "-c", "echo starting; echo hosting addr=127.0.0.1:4242; exec sleep 60")
	cmd.Stdout = &log
	m := StartUntil(t, cmd, &log, regexp.MustCompile(`hosting addr=(\S+)`), time.Minute)
	if len(m) != 2 || m[1] != "127.0.0.1:4242" {
		t.Errorf("match %q, want the address 127.0.0.1:4242", m)
	}
	if err := cmd.Process.Signal(syscall.Signal(0)); err != nil {
		t.Errorf("the process is gone before the test ended: %v", err)
	}
}
