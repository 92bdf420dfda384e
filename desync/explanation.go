package desync

import (
	"fmt"
	"strings"
)

// Values of Explanation.Kind: what kind of divergence it was, where the
// explanation can tell.
const (
	// KindCommand means the player applied different commands from the
	// host's at the first differing tick: one dropped, applied twice, or
	// out of order.
	KindCommand = "command"
	// KindSimulation means the player's own simulation diverged: with
	// the host's commands, re-simulating the player's state from the last
	// matching checkpoint on the player's side gives the same divergence
	// again. Its code or its machine computes differently from the host's.
	KindSimulation = "simulation"
	// KindOutside means the player's state changed outside a step: its
	// live run diverged but re-simulating the same window does not
	// diverge the same way. Memory changed behind the simulation's back, a
	// copy or an encoding that lost a field, or a value that differs from
	// run to run (the wall clock, the order of a Go map).
	KindOutside = "outside"
)

// KindText is a sentence for an Explanation.Kind.
func KindText(kind string) string {
	switch kind {
	case KindCommand:
		return "a command was applied differently on the player's machine"
	case KindSimulation:
		return "the player's own simulation diverged (its code or its machine): re-simulating the window gives the same divergence"
	case KindOutside:
		return "the player's state changed outside a step (corruption, a lost field, the wall clock or a map's iteration order): re-simulating the window does not diverge the same way"
	}
	return "unknown"
}

// Explanation says where a player's state first departed from the
// host's and what differed, as the host worked it out by re-simulating
// the window from the last matching checkpoint (package desync/explain).
type Explanation struct {
	// From is the last checkpoint tick at which the player's hashes
	// matched the host's: the window explained starts there.
	From uint64 `json:"from"`
	// FirstTick is the first tick whose processing (the commands stamped
	// FirstTick, then the step from FirstTick to FirstTick+1) left the
	// player's state different from the host's. When Exact is false it is
	// only a bound: the states differed somewhere in From..FirstTick.
	FirstTick uint64 `json:"first_tick"`
	// Exact tells whether FirstTick is the tick itself.
	Exact bool `json:"exact"`
	// Kind is KindCommand, KindSimulation or KindOutside; empty when the
	// explanation cannot tell.
	Kind string `json:"kind,omitempty"`
	// Differences are the fields that differ at FirstTick (at the end of
	// the window when Exact is false), in the game's own terms; empty for
	// a game that cannot name fields (it then says only which maps).
	Differences []Difference `json:"differences"`
	// Omitted is how many more differences there were.
	Omitted int `json:"omitted,omitempty"`
}

// Difference is one field that differs: lockstep.Difference as a report
// stores it.
type Difference struct {
	// Path names the field: "map 0 / pawn 615 / x".
	Path string `json:"path"`
	// Host is the host's value, Player the player's.
	Host   string `json:"host"`
	Player string `json:"player"`
}

// Lines is the explanation as "host desyncs explain" prints it: a line
// "first differing tick: T", one for the kind, then one "differs:" line
// per difference, host value vs player value.
func (e *Explanation) Lines() []string {
	tick := fmt.Sprintf("first differing tick: %d", e.FirstTick)
	if !e.Exact {
		tick = fmt.Sprintf("first differing tick: %d at the latest (between %d and %d: the per-tick trace does not cover what differs)", e.FirstTick, e.From, e.FirstTick)
	}
	out := []string{tick}
	if e.Kind != "" {
		out = append(out, "kind: "+e.Kind+": "+KindText(e.Kind))
	}
	for _, d := range e.Differences {
		out = append(out, "differs: "+d.Path+": "+d.Host+" vs "+d.Player)
	}
	if e.Omitted > 0 {
		out = append(out, fmt.Sprintf("differs: %d more", e.Omitted))
	}
	return out
}

// Summary is the explanation in one line, for a list, a status page or a
// notice: "tick 250: map 0 / pawn 615 / x: 12 vs 13 (and 3 more)", the
// tick with "by" before it when it is only a bound.
func (e *Explanation) Summary() string {
	s := fmt.Sprintf("tick %d", e.FirstTick)
	if !e.Exact {
		s = fmt.Sprintf("by tick %d", e.FirstTick)
	}
	if len(e.Differences) == 0 {
		return s
	}
	d := e.Differences[0]
	s += ": " + d.Path + ": " + d.Host + " vs " + d.Player
	if n := len(e.Differences) - 1 + e.Omitted; n > 0 {
		s += fmt.Sprintf(" (and %d more)", n)
	}
	return s
}

// String is Lines joined by newlines.
func (e *Explanation) String() string { return strings.Join(e.Lines(), "\n") }
