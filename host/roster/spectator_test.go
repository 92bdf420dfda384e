package roster_test

import (
	"errors"
	"testing"

	"github.com/lockhost/lockhost/host/roster"
	"github.com/lockhost/lockhost/wire"
)

func TestSpectatorsCountedSeparately(t *testing.T) {
	r := roster.New(roster.Config{MaxPlayers: 1, MaxSpectators: 1})
	steps := []struct {
		id        int32
		name      string
		spectator bool
		want      error
	}{
		{1, "Alice", false, nil},
		{2, "Bob", false, roster.ErrFull},
		{3, "Carol", true, nil}, // players are full, but spectators are counted apart
		{4, "Dave", true, roster.ErrSpectatorsFull},
		{5, "alice", true, roster.ErrNameTaken}, // names are unique across both
		{6, "Ed", true, roster.ErrNameLength},   // name rules come first
	}
	for _, s := range steps {
		p, notices, err := r.Admit(s.id, s.name, s.spectator)
		if !errors.Is(err, s.want) {
			t.Fatalf("Admit(%s, spectator=%v) = %v, want %v", s.name, s.spectator, err, s.want)
		}
		if err != nil {
			continue
		}
		if s.spectator {
			if p.Faction != roster.NoFaction || !p.Spectator || len(notices) != 1 {
				t.Fatalf("spectator %+v, notices %v", p, notices)
			}
		}
	}
	if players, specs := r.Count(); players != 1 || specs != 1 {
		t.Fatalf("Count = %d, %d", players, specs)
	}
	// A spectator leaving does not take a faction offline.
	n, _ := r.Remove(3, "")
	if len(n) != 1 {
		t.Fatalf("spectator leave notices %v", n)
	}
}

func TestFactionModes(t *testing.T) {
	for _, tc := range []struct {
		mode        string
		sameFaction bool
	}{{"shared", true}, {"per-player", false}} {
		m, err := roster.ParseFactionMode(tc.mode)
		if err != nil {
			t.Fatal(err)
		}
		r := roster.New(roster.Config{MaxPlayers: 4, Factions: m})
		a, na, _ := r.Admit(1, "Alice", false)
		b, nb, _ := r.Admit(2, "Bob", false)
		if (a.Faction == b.Faction) != tc.sameFaction {
			t.Fatalf("%s: factions %d and %d", tc.mode, a.Faction, b.Faction)
		}
		// The first of each faction brings it online.
		if len(na) != 2 || na[1].Kind != wire.NoticeFactionOnline {
			t.Fatalf("%s: Alice's notices %v", tc.mode, na)
		}
		if online := len(nb) == 2; online == tc.sameFaction {
			t.Fatalf("%s: Bob's notices %v", tc.mode, nb)
		}
		// Alice leaving takes her faction offline only if she was alone in it.
		n, _ := r.Remove(1, "")
		if offline := len(n) == 2; offline == tc.sameFaction {
			t.Fatalf("%s: Alice's leave notices %v", tc.mode, n)
		}
	}
	if _, err := roster.ParseFactionMode("teams"); err == nil {
		t.Fatal("unknown faction mode accepted")
	}
}

func TestSetLatency(t *testing.T) {
	r := roster.New(roster.Config{MaxPlayers: 2})
	r.Admit(1, "Alice", false)
	if err := r.SetLatency(1, 42); err != nil || r.Get(1).LatencyMs != 42 {
		t.Fatalf("SetLatency: %v %+v", err, r.Get(1))
	}
	if err := r.SetLatency(9, 1); !errors.Is(err, roster.ErrUnknownPlayer) {
		t.Fatalf("SetLatency on nobody: %v", err)
	}
}
