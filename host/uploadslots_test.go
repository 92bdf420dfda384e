package host_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/lockhost/lockhost/host"
	"github.com/lockhost/lockhost/join"
	"github.com/lockhost/lockhost/lockstep/locksteptest"
	"github.com/lockhost/lockhost/testing/testkit"
)

// heldJoin joins in the background and stops reading at its first world
// chunk until release is closed, so its download holds its upload slot.
func heldJoin(t *testing.T, addr, name string, release <-chan struct{}) (downloading <-chan struct{}, done <-chan error) {
	t.Helper()
	dl, errc := make(chan struct{}), make(chan error, 1)
	var once sync.Once
	cfg := joinCfg(addr, name, newHashLog())
	cfg.Progress = func(p join.Progress) {
		if p.Phase == join.PhaseDownload && p.Done > 0 {
			once.Do(func() { close(dl); <-release })
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go func() {
		s, err := join.Join(ctx, cfg)
		if err == nil {
			err = s.Leave("test over")
		}
		errc <- err
	}()
	return dl, errc
}

// TestUploadSlotsQueueThirdJoiner: with two upload slots, a third joiner
// waits while two worlds are on their way, is told it is first in line
// (a queued notice whose place the queued progress phase reports), shows on the overview as
// waiting, and gets the world once a slot frees.
func TestUploadSlotsQueueThirdJoiner(t *testing.T) {
	h := startHost(t, host.Config{Join: host.JoinConfig{MaxUploadSlots: 2}}, locksteptest.New(2, 64<<10))
	release := make(chan struct{})
	dl1, done1 := heldJoin(t, h.addr, "First", release)
	<-dl1
	dl2, done2 := heldJoin(t, h.addr, "Second", release)
	<-dl2

	var mu sync.Mutex
	var phases []join.Phase
	var notices []string
	var places []uint64 // the queued reports' places in line
	cfg := joinCfg(h.addr, "Third", newHashLog())
	cfg.Progress = func(p join.Progress) {
		mu.Lock()
		defer mu.Unlock()
		if len(phases) == 0 || phases[len(phases)-1] != p.Phase {
			phases = append(phases, p.Phase)
		}
		if p.Phase == join.PhaseQueued {
			places = append(places, p.Done)
		}
	}
	cfg.Notice = func(text string) {
		mu.Lock()
		defer mu.Unlock()
		if strings.Contains(text, "upload slot") {
			notices = append(notices, text)
		}
	}
	third := make(chan error, 1)
	go func() {
		s, err := join.Join(context.Background(), cfg)
		if err == nil {
			err = s.Leave("test over")
		}
		third <- err
	}()
	testkit.WaitFor(t, "the third joiner waiting on the overview", func() bool {
		u := h.srv.Overview().Uploads
		return len(u.Sending) == 2 && len(u.Waiting) == 1 && u.Waiting[0] == "Third"
	})
	testkit.WaitFor(t, "the queued notice", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(notices) > 0
	})
	mu.Lock()
	if !strings.Contains(notices[0], "2 joins at a time, and you are number 1 in line") {
		t.Errorf("notice %q", notices[0])
	}
	if len(places) != 1 || places[0] != 1 {
		t.Errorf("queued progress reports places %v; want [1], the notice's place in line", places)
	}
	mu.Unlock()
	select {
	case err := <-third:
		t.Fatalf("the third joiner finished while both slots were taken: %v", err)
	default:
	}

	close(release)
	for i, done := range []<-chan error{done1, done2, third} {
		if err := <-done; err != nil {
			t.Fatalf("joiner %d: %v", i+1, err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if i := indexOf(phases, join.PhaseQueued); i < 0 || indexOf(phases[i:], join.PhaseDownload) < 0 {
		t.Errorf("the third joiner's phases %v: want queued, then download", phases)
	}
	if u := h.srv.Overview().Uploads; len(u.Sending) != 0 || len(u.Waiting) != 0 || u.Slots != 2 {
		t.Errorf("uploads after the joins: %+v", u)
	}
}

func indexOf[T comparable](s []T, v T) int {
	for i, x := range s {
		if x == v {
			return i
		}
	}
	return -1
}
