package colony

import (
	"slices"
	"testing"
)

// TestNewWithProgress: generation reports each map as it is done, and the
// world is the one New makes.
func TestNewWithProgress(t *testing.T) {
	content, _, err := DefaultContent()
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Maps: 3, Width: 32, Height: 32, Seed: 7, ThingsPerMap: 50, PawnsPerMap: 5}
	var got []int
	w, err := NewWithProgress(content, cfg, func(done, total int) {
		if total != 3 {
			t.Errorf("total %d, want 3", total)
		}
		got = append(got, done)
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := []int{1, 2, 3}; !slices.Equal(got, want) {
		t.Fatalf("progress %v, want %v", got, want)
	}
	plain, err := New(content, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if w.WorldHash() != plain.WorldHash() {
		t.Fatal("the world made with progress differs from New's")
	}
}
