package main

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/lockhost/lockhost/testing/testkit"
)

// lineLog is a process's output, line by line, each line with the time
// this program read it.
type lineLog struct {
	mu      sync.Mutex
	partial []byte
	lines   []timedLine
}

// timedLine is one line of output and when it was read.
type timedLine struct {
	at   time.Time
	text string
}

// Write keeps each complete line of p with the time now.
func (l *lineLog) Write(p []byte) (int, error) {
	now := time.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	l.partial = append(l.partial, p...)
	for {
		i := bytes.IndexByte(l.partial, '\n')
		if i < 0 {
			return len(p), nil
		}
		l.lines = append(l.lines, timedLine{at: now, text: strings.TrimRight(string(l.partial[:i]), "\r")})
		l.partial = l.partial[i+1:]
	}
}

// find returns the first line matching re read at or after after.
func (l *lineLog) find(re *regexp.Regexp, after time.Time) (timedLine, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, line := range l.lines {
		if !line.at.Before(after) && re.MatchString(line.text) {
			return line, true
		}
	}
	return timedLine{}, false
}

// wait waits up to d for a line matching re read at or after after; it
// fails early when fail matches a line read since after, or when exited
// says the process has ended.
func (l *lineLog) wait(re, fail *regexp.Regexp, after time.Time, d time.Duration, exited func() bool) (timedLine, error) {
	deadline := time.Now().Add(d)
	for {
		if line, ok := l.find(re, after); ok {
			return line, nil
		}
		if fail != nil {
			if line, ok := l.find(fail, after); ok {
				return timedLine{}, fmt.Errorf("%q instead of %q", line.text, re)
			}
		}
		if exited != nil && exited() {
			return timedLine{}, fmt.Errorf("the process ended before %q:\n%s", re, l.tail(30))
		}
		if time.Now().After(deadline) {
			return timedLine{}, fmt.Errorf("no %q in %v:\n%s", re, d, l.tail(30))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// tail is the last n lines.
func (l *lineLog) tail(n int) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var b strings.Builder
	for _, line := range l.lines[max(0, len(l.lines)-n):] {
		b.WriteString(line.text)
		b.WriteByte('\n')
	}
	return b.String()
}

// connWatch notes when a relay accepted each of its connections, polling
// it every 5 ms.
type connWatch struct {
	relay *testkit.Relay
	mu    sync.Mutex
	at    []time.Time
	stopc chan struct{}
	done  chan struct{}
}

func watchConns(r *testkit.Relay) *connWatch {
	w := &connWatch{relay: r, stopc: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(w.done)
		t := time.NewTicker(5 * time.Millisecond)
		defer t.Stop()
		for {
			n := len(r.Conns())
			w.mu.Lock()
			for len(w.at) < n {
				w.at = append(w.at, time.Now())
			}
			w.mu.Unlock()
			select {
			case <-w.stopc:
				return
			case <-t.C:
			}
		}
	}()
	return w
}

func (w *connWatch) stop() {
	close(w.stopc)
	<-w.done
}

// accepted is when connection i was accepted (seen), and whether it was.
func (w *connWatch) accepted(i int) (time.Time, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if i < 0 || i >= len(w.at) {
		return time.Time{}, false
	}
	return w.at[i], true
}

// downFrom is the bytes forwarded to the client by the relay's
// connections from index from on, and how many those are.
func downFrom(r *testkit.Relay, from int) (int64, int) {
	var n int64
	conns := r.Conns()
	for _, c := range conns[min(from, len(conns)):] {
		n += c.Down()
	}
	return n, max(0, len(conns)-from)
}
