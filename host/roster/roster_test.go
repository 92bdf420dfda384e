package roster_test

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/lockhost/lockhost/host/roster"
	"github.com/lockhost/lockhost/wire"
)

func TestValidateName(t *testing.T) {
	for _, tc := range []struct {
		name string
		want error
	}{
		{"", roster.ErrNameLength},
		{"a", roster.ErrNameLength},
		{"ab", roster.ErrNameLength},
		{"abc", nil},
		{"Bob", nil},
		{strings.Repeat("x", 15), nil},
		{strings.Repeat("x", 16), roster.ErrNameLength},
		{strings.Repeat("x", 100), roster.ErrNameLength},
		{"snake_case", nil},
		{"___", nil},
		{"007", nil},
		{"Player_42", nil},
		{"AZaz09_", nil},
		{"two words", roster.ErrNameChars},
		{" lead", roster.ErrNameChars},
		{"trail ", roster.ErrNameChars},
		{"dash-ed", roster.ErrNameChars},
		{"dot.ted", roster.ErrNameChars},
		{"at@host", roster.ErrNameChars},
		{"Zoë", roster.ErrNameChars},
		{"Zoëëëë", roster.ErrNameChars},
		{"日本語", roster.ErrNameChars},
		{"ab\x00", roster.ErrNameChars},
		{"abc\n", roster.ErrNameChars},
		{"\tabc", roster.ErrNameChars},
		{"a\x7fb", roster.ErrNameChars},
		{"a\xffb", roster.ErrNameChars},
		{"ab`", roster.ErrNameChars},    // just below 'a'
		{"ab{", roster.ErrNameChars},    // just above 'z'
		{"ab@", roster.ErrNameChars},    // just below 'A'
		{"ab[", roster.ErrNameChars},    // just above 'Z'
		{"ab/", roster.ErrNameChars},    // just below '0'
		{"ab:", roster.ErrNameChars},    // just above '9'
		{"ab\x5e", roster.ErrNameChars}, // '^', just below '_'
	} {
		if err := roster.ValidateName(tc.name); err != tc.want {
			t.Errorf("ValidateName(%q) = %v, want %v", tc.name, err, tc.want)
		}
	}
}

func TestAdmitRuleOrder(t *testing.T) {
	r := roster.New(roster.Config{MaxPlayers: 2})
	if _, _, err := r.Admit(1, "Alice", false); err != nil {
		t.Fatal(err)
	}
	if _, _, err := r.Admit(2, "Bob", false); err != nil {
		t.Fatal(err)
	}
	// The roster is full now; earlier rules still win.
	for _, tc := range []struct {
		name string
		want error
	}{
		{"Al", roster.ErrNameLength},    // bad name beats full
		{"Al ice", roster.ErrNameChars}, // bad name beats full
		{"ALICE", roster.ErrNameTaken},  // taken (any case) beats full
		{"bob", roster.ErrNameTaken},    // case-insensitive
		{"Carol", roster.ErrFull},       // a fine name meets the full session
		{"A", roster.ErrNameLength},     // bad name beats taken, too
		{"alice_", roster.ErrFull},      // not the same name
		{"Alic", roster.ErrFull},        // nor a prefix
		{"aLiCe", roster.ErrNameTaken},  // mixed case
		{"B0b", roster.ErrFull},         // digits are not letters
		{strings.Repeat("b", 16), roster.ErrNameLength},
	} {
		p, notices, err := r.Admit(99, tc.name, false)
		if !errors.Is(err, tc.want) {
			t.Errorf("Admit(%q) = %v, want %v", tc.name, err, tc.want)
		}
		if p != nil || notices != nil {
			t.Errorf("Admit(%q) refused but returned %v %v", tc.name, p, notices)
		}
	}
	if r.Len() != 2 {
		t.Fatalf("refusals changed the roster: %d players", r.Len())
	}

	// Taken is checked before full even with room to spare.
	r2 := roster.New(roster.Config{MaxPlayers: 10})
	if _, _, err := r2.Admit(1, "Dave", false); err != nil {
		t.Fatal(err)
	}
	if _, _, err := r2.Admit(2, "dAVE", false); !errors.Is(err, roster.ErrNameTaken) {
		t.Fatalf("dAVE after Dave: %v", err)
	}
	// A second admission under the same ID is refused.
	if _, _, err := r2.Admit(1, "Erin", false); err == nil {
		t.Fatal("duplicate player ID admitted")
	}
	if r2.Len() != 1 {
		t.Fatalf("%d players after refusals", r2.Len())
	}

	if _, _, err := roster.New(roster.Config{MaxPlayers: 0}).Admit(1, "Nobody", false); !errors.Is(err, roster.ErrFull) {
		t.Fatalf("roster of 0: %v", err)
	}
}

func TestAdmitNotices(t *testing.T) {
	r := roster.New(roster.Config{MaxPlayers: 4})
	p, notices, err := r.Admit(3, "Alice", false)
	if err != nil {
		t.Fatal(err)
	}
	if p.ID != 3 || p.Name != "Alice" || p.Faction != roster.DefaultFaction || p.Status != wire.StatusDownloading {
		t.Fatalf("admitted %+v", p)
	}
	if len(notices) != 2 ||
		notices[0].Kind != wire.NoticeJoined || !strings.Contains(notices[0].Text, "Alice") ||
		notices[1].Kind != wire.NoticeFactionOnline {
		t.Fatalf("first player's notices %+v", notices)
	}

	_, notices, err = r.Admit(4, "Bob", false)
	if err != nil {
		t.Fatal(err)
	}
	if len(notices) != 1 || notices[0].Kind != wire.NoticeJoined || !strings.Contains(notices[0].Text, "Bob") {
		t.Fatalf("second player's notices %+v", notices)
	}
	if r.FactionOnline(roster.DefaultFaction) != 2 || r.FactionOnline(roster.DefaultFaction+1) != 0 {
		t.Fatalf("faction counts %d %d", r.FactionOnline(roster.DefaultFaction), r.FactionOnline(roster.DefaultFaction+1))
	}

	// When everyone left, the next one brings the faction online again.
	for _, id := range []int32{3, 4} {
		if _, ok := r.Remove(id, ""); !ok {
			t.Fatalf("Remove(%d) failed", id)
		}
	}
	_, notices, err = r.Admit(5, "Carol", false)
	if err != nil {
		t.Fatal(err)
	}
	if len(notices) != 2 || notices[1].Kind != wire.NoticeFactionOnline {
		t.Fatalf("notices after the faction emptied: %+v", notices)
	}
}

func TestRemove(t *testing.T) {
	r := roster.New(roster.Config{MaxPlayers: 2})
	for i, name := range []string{"Alice", "Bob"} {
		if _, _, err := r.Admit(int32(i+1), name, false); err != nil {
			t.Fatal(err)
		}
	}
	n, ok := r.Remove(1, "")
	if !ok || len(n) != 1 || n[0].Kind != wire.NoticeLeft || n[0].Text != "Alice left the session." {
		t.Fatalf("Remove: %+v %v", n, ok)
	}
	// Bob is the last of the shared faction: it goes offline with him.
	n, ok = r.Remove(2, "timed out")
	if !ok || len(n) != 2 || n[0].Kind != wire.NoticeLeft || n[0].Text != "Bob left the session (timed out)." ||
		n[1].Kind != wire.NoticeFactionOffline {
		t.Fatalf("Remove with a reason: %+v %v", n, ok)
	}
	if n, ok := r.Remove(2, ""); ok || n != nil {
		t.Fatalf("second Remove: %+v %v", n, ok)
	}
	if r.Len() != 0 || r.Get(1) != nil {
		t.Fatalf("%d players left", r.Len())
	}
	// The names and the slots are free again, in any case.
	if _, _, err := r.Admit(7, "ALICE", false); err != nil {
		t.Fatalf("name of a removed player: %v", err)
	}
	if _, _, err := r.Admit(8, "bob", false); err != nil {
		t.Fatalf("name of a removed player: %v", err)
	}
	if _, _, err := r.Admit(9, "Carol", false); !errors.Is(err, roster.ErrFull) {
		t.Fatalf("third player in a roster of 2: %v", err)
	}
}

func TestListInIDOrder(t *testing.T) {
	r := roster.New(roster.Config{MaxPlayers: 100})
	ids := []int32{5, 2, 9, -1, math.MaxInt32, 0, math.MinInt32, 7, 1 << 30, -(1 << 30)}
	for i, id := range ids {
		if _, _, err := r.Admit(id, "player"+string(rune('a'+i)), false); err != nil {
			t.Fatal(err)
		}
	}
	r.Remove(7, "")
	list := r.List()
	var got []int32
	for _, p := range list {
		got = append(got, p.ID)
	}
	want := slices.DeleteFunc(slices.Clone(ids), func(id int32) bool { return id == 7 })
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("List order %v, want %v", got, want)
	}
	for _, id := range want {
		if p := r.Get(id); p == nil || p.ID != id {
			t.Fatalf("Get(%d) = %v", id, p)
		}
	}
	// List is a copy.
	list[0].Name = "changed"
	if r.List()[0].Name == "changed" {
		t.Fatal("List shares the roster's players")
	}
}

func TestSetStatus(t *testing.T) {
	r := roster.New(roster.Config{MaxPlayers: 2})
	if _, _, err := r.Admit(1, "Alice", false); err != nil {
		t.Fatal(err)
	}
	if err := r.SetStatus(1, wire.StatusPlaying); err != nil {
		t.Fatal(err)
	}
	if r.Get(1).Status != wire.StatusPlaying || r.List()[0].Status != wire.StatusPlaying {
		t.Fatalf("status %v", r.Get(1).Status)
	}
	if err := r.SetStatus(2, wire.StatusPlaying); !errors.Is(err, roster.ErrUnknownPlayer) {
		t.Fatalf("SetStatus of an unknown player: %v", err)
	}
	r.Remove(1, "")
	if err := r.SetStatus(1, wire.StatusPlaying); !errors.Is(err, roster.ErrUnknownPlayer) {
		t.Fatalf("SetStatus of a removed player: %v", err)
	}
}

func TestStatusString(t *testing.T) {
	seen := map[string]bool{}
	for _, s := range []wire.PlayerStatus{wire.StatusDownloading, wire.StatusPlaying, wire.StatusSpectating, wire.StatusDesynced, 9} {
		str := s.String()
		if str == "" || seen[str] {
			t.Errorf("status %d: %q", s, str)
		}
		seen[str] = true
	}
}
