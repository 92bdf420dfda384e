package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/lockhost/lockhost/join"
)

// TestProgressShowsPlaceInLine: on a terminal, the queued phase shows the
// place in line the host's notice gave, and each new place is drawn at
// once (a host sends one only when the place changes).
func TestProgressShowsPlaceInLine(t *testing.T) {
	var out bytes.Buffer
	b := &progressBar{w: &out, tty: true}
	b.update(join.Progress{Phase: join.PhaseQueued, Done: 2})
	b.update(join.Progress{Phase: join.PhaseQueued, Done: 1})
	lines := strings.Split(out.String(), "\r")
	if len(lines) != 3 || !strings.Contains(lines[1], "number 2 in line") || !strings.Contains(lines[2], "number 1 in line") {
		t.Fatalf("drawn %q; want the places 2, then 1", out.String())
	}
	out.Reset()
	b.update(join.Progress{Phase: join.PhaseQueued}) // a host that does not say the place
	if strings.Contains(out.String(), "in line") {
		t.Errorf("drawn %q without a place", out.String())
	}
}
