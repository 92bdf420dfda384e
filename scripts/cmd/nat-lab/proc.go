package main

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/lockhost/lockhost/testing/syncbuf"
)

// proc is one process the lab started inside a namespace.
type proc struct {
	name  string
	cmd   *exec.Cmd
	out   *syncbuf.Buffer
	stdin io.WriteCloser // nil unless asked for
	done  chan struct{}
	err   error // set before done closes
	cells int   // the next cell a spawn goes to (roundTrip)
}

// procs are every process started, so cleanup can stop those still
// running.
var (
	procsMu sync.Mutex
	procs   []*proc
)

// start runs args inside namespace ns (ip netns exec runs the command in
// its own process, so the pid is the command's), its output kept.
func start(name, ns string, stdin bool, env []string, args ...string) (*proc, error) {
	cmd := exec.Command("ip", append([]string{"netns", "exec", ns}, args...)...)
	p := &proc{name: name, cmd: cmd, out: &syncbuf.Buffer{}, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = p.out, p.out
	cmd.Env = append(os.Environ(), env...)
	if stdin {
		w, err := cmd.StdinPipe()
		if err != nil {
			return nil, err
		}
		p.stdin = w
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	procsMu.Lock()
	procs = append(procs, p)
	procsMu.Unlock()
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// running says whether p has not exited yet.
func (p *proc) running() bool {
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

// waitFor waits until p's output matches re and returns the first match's
// groups; it fails when p exits first or within does not suffice.
func (p *proc) waitFor(re *regexp.Regexp, within time.Duration) ([]string, error) {
	deadline := time.Now().Add(within)
	for {
		if m := re.FindStringSubmatch(p.out.String()); m != nil {
			return m, nil
		}
		if !p.running() {
			return nil, fmt.Errorf("%s exited (%v) before printing %q; its output ends:\n%s", p.name, p.err, re, tail(p.out.String(), 15))
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("%s did not print %q within %v; its output ends:\n%s", p.name, re, within, tail(p.out.String(), 15))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// say writes one line to p's standard input.
func (p *proc) say(line string) error {
	_, err := io.WriteString(p.stdin, line+"\n")
	return err
}

// stop interrupts p (what Ctrl-C does) and waits for it to exit, killing
// it if it takes longer than grace.
func (p *proc) stop(grace time.Duration) error {
	if !p.running() {
		return p.err
	}
	_ = p.cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-p.done:
		return p.err
	case <-time.After(grace):
		_ = p.cmd.Process.Kill()
		<-p.done
		return fmt.Errorf("%s did not stop within %v after an interrupt: killed", p.name, grace)
	}
}

// stopAll kills every process still running (the lab's cleanup).
func stopAll() {
	procsMu.Lock()
	defer procsMu.Unlock()
	for _, p := range procs {
		if p.running() {
			_ = p.cmd.Process.Kill()
			<-p.done
		}
	}
}

// tail is the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return "  | " + strings.Join(lines, "\n  | ")
}
