package main

import (
	"bytes"
	"fmt"
	"io"
	"sync"
	"sync/atomic"

	"github.com/lockhost/lockhost/game/colony"
	"github.com/lockhost/lockhost/internal/termsafe"
	"github.com/lockhost/lockhost/join"
	"github.com/lockhost/lockhost/lockstep"
)

// maxTyped bounds the typed commands waiting to be applied: one the host
// refused (it says so in a notice) is never applied, and is forgotten
// once this many newer ones wait.
const maxTyped = 64

// typedLog remembers the commands typed on standard input until the host
// applies them, then says what they did, so every typed command gets an
// answer: this line, or the host's refusal notice. A speed change is
// announced by the host to everyone, so it prints nothing here.
type typedLog struct {
	out     io.Writer
	me      atomic.Int32 // this player's ID
	mu      sync.Mutex
	pending []lockstep.Command
}

func sameCommand(a, b lockstep.Command) bool {
	return a.MapID == b.MapID && a.Kind == b.Kind && bytes.Equal(a.Payload, b.Payload)
}

// add remembers a command about to be sent.
func (t *typedLog) add(c lockstep.Command) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.pending) == maxTyped {
		t.pending = t.pending[1:]
	}
	t.pending = append(t.pending, c)
}

// forget drops a command that could not be sent.
func (t *typedLog) forget(c lockstep.Command) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for i := len(t.pending) - 1; i >= 0; i-- {
		if sameCommand(t.pending[i], c) {
			t.pending = append(t.pending[:i], t.pending[i+1:]...)
			return
		}
	}
}

// applied is the session's OnApply hook: a command of this player's that
// was typed is printed with what it did.
func (t *typedLog) applied(c lockstep.Command) {
	if c.Player != t.me.Load() {
		return
	}
	t.mu.Lock()
	found := false
	for i, p := range t.pending {
		if sameCommand(p, c) {
			t.pending = append(t.pending[:i], t.pending[i+1:]...)
			found = true
			break
		}
	}
	t.mu.Unlock()
	if found && c.Kind != lockstep.KindSetSpeed {
		fmt.Fprintf(t.out, "done at tick %d: %s\n", c.Tick, termsafe.String(describe(c)))
	}
}

// describe says what an applied colony command did.
func describe(c lockstep.Command) string {
	switch c.Kind {
	case colony.CmdSpawnThing:
		if a, err := colony.DecodeSpawnThing(c.Payload); err == nil {
			return fmt.Sprintf("spawned %d %s on map %d at %d,%d", a.Count, a.Thing, c.MapID, a.X, a.Y)
		}
	case colony.CmdMovePawn:
		if a, err := colony.DecodeMovePawn(c.Payload); err == nil {
			return fmt.Sprintf("pawn %d on map %d is walking to %d,%d", a.PawnID, c.MapID, a.X, a.Y)
		}
	}
	return fmt.Sprintf("command kind %d on map %d", c.Kind, c.MapID)
}

// chatLine is a relayed chat line as the join tool prints it.
func chatLine(c join.ChatLine) string {
	if c.FromHost() {
		return "chat: [host] " + termsafe.String(c.Text)
	}
	return fmt.Sprintf("chat: <%s> %s", termsafe.String(c.From), termsafe.String(c.Text))
}
