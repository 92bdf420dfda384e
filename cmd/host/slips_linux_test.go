package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lockhost/lockhost/testing/syncbuf"
)

// TestUnwritableDataDir: a data folder the host cannot write stops it at
// start, in one sentence with exit 2; before, it was found when an
// operator banned someone, and the ban was not applied. Run as root, the
// host runs as nobody, for whom the folder is read-only.
func TestUnwritableDataDir(t *testing.T) {
	bin := hostBinary(t)
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	if err := os.Mkdir(data, 0o555); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "serve", "--data-dir", data, "--listen", "127.0.0.1:0", "--world-mib", "200", "--console")
	if os.Getuid() == 0 {
		// nobody must reach the binary and the folder: the test's own
		// folders are made for its owner only.
		for _, d := range []string{filepath.Dir(bin), dir, filepath.Dir(dir)} {
			if err := os.Chmod(d, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	}
	// What an operator would do once the host is up: ban someone.
	cmd.Stdin = strings.NewReader("ban 192.0.2.7 1h flooding\nbans\nshutdown\n")
	var out syncbuf.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-time.After(120 * time.Second): // bounds a hang only
		_ = cmd.Process.Kill()
		t.Fatalf("the host did not stop:\n%s", out.String())
	}
	wantRefused(t, exitCode(t, err), out.String(), "--data-dir "+data+": the folder "+data+" cannot be written")
}
