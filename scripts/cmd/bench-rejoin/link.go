package main

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lockhost/lockhost/testing/syncbuf"
)

// link is a TCP relay to the host that can be cut: cut resets every
// connection and refuses new ones (accepted and closed at once) until
// restore. It counts each connection's bytes from the host.
type link struct {
	ln     net.Listener
	target string

	mu    sync.Mutex
	down  bool
	conns []*linkConn
}

// linkConn is one relayed connection.
type linkConn struct {
	client, host net.Conn
	opened       time.Time
	down         atomic.Int64 // bytes from the host to the client
}

func newLink(target string) (*link, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	l := &link{ln: ln, target: target}
	go l.accept()
	return l, nil
}

func (l *link) addr() string { return l.ln.Addr().String() }

func (l *link) close() { l.ln.Close(); l.cut() }

func (l *link) accept() {
	for {
		c, err := l.ln.Accept()
		if err != nil {
			return
		}
		l.mu.Lock()
		down := l.down
		l.mu.Unlock()
		if down {
			c.Close()
			continue
		}
		h, err := net.Dial("tcp", l.target)
		if err != nil {
			c.Close()
			continue
		}
		lc := &linkConn{client: c, host: h, opened: time.Now()}
		l.mu.Lock()
		l.conns = append(l.conns, lc)
		l.mu.Unlock()
		go pipe(h, c, nil)      // client to host
		go pipe(c, h, &lc.down) // host to client, counted
	}
}

// pipe copies src to dst, counting into n, and closes both at the end.
func pipe(dst, src net.Conn, n *atomic.Int64) {
	buf := make([]byte, 32<<10)
	for {
		k, err := src.Read(buf)
		if k > 0 {
			if _, werr := dst.Write(buf[:k]); werr != nil {
				break
			}
			if n != nil {
				n.Add(int64(k))
			}
		}
		if err != nil {
			break
		}
	}
	dst.Close()
	src.Close()
}

// cut resets every connection and refuses new ones.
func (l *link) cut() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.down = true
	for _, c := range l.conns {
		for _, nc := range []net.Conn{c.client, c.host} {
			if tc, ok := nc.(*net.TCPConn); ok {
				_ = tc.SetLinger(0) // a reset, as a dropped link looks to both
			}
			nc.Close()
		}
	}
}

// restore lets connections through again.
func (l *link) restore() {
	l.mu.Lock()
	l.down = false
	l.mu.Unlock()
}

func (l *link) conn(i int) *linkConn {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.conns[i]
}

func (l *link) last() *linkConn {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.conns[len(l.conns)-1]
}

// player is a running join tool.
type player struct {
	cmd *exec.Cmd
	out *syncbuf.Buffer
}

func startPlayer(joiner, addr, name string, bot float64) *player {
	p := &player{out: &syncbuf.Buffer{}}
	p.cmd = exec.Command(joiner, addr, "--name", name, "--bot", strconv.FormatFloat(bot, 'g', -1, 64), "-q", "--no-input",
		"--reconnect-for", "20m")
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	if err := p.cmd.Start(); err != nil {
		fmt.Fprintf(p.out, "start: %v\n", err)
	}
	return p
}

func (p *player) stop() {
	if p.cmd.Process != nil {
		_ = p.cmd.Process.Kill()
		_ = p.cmd.Wait()
	}
}

// lines are the output lines holding s.
func (p *player) lines(s string) []string {
	var out []string
	sc := bufio.NewScanner(bytes.NewReader([]byte(p.out.String())))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if strings.Contains(sc.Text(), s) {
			out = append(out, sc.Text())
		}
	}
	return out
}

// waitLine waits until n output lines hold s.
func (p *player) waitLine(s string, n int, d time.Duration) error {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if len(p.lines(s)) >= n {
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Errorf("no %d lines with %q in %v; the tool said:\n%s", n, s, d, tail(p.out.String()))
}

// tail is the last 2 KiB of s.
func tail(s string) string {
	if len(s) > 2048 {
		s = s[len(s)-2048:]
	}
	return s
}
