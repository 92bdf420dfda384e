package host

import "testing"

func TestPendingConns(t *testing.T) {
	p := newPendingConns(3, 2)
	a, b := addrKey("2001:db8::1"), addrKey("2001:db8::2") // one /64
	c := addrKey("192.0.2.1")
	steps := []struct {
		key     string
		release bool
		want    bool
	}{
		{a, false, true},
		{b, false, true},
		{a, false, false}, // the /64 holds two
		{c, false, true},
		{c, false, false}, // three in all
		{a, true, true},   // one of the /64 is admitted or gone
		{c, false, true},
		{b, false, false},
	}
	for i, s := range steps {
		if s.release {
			p.release(s.key)
			continue
		}
		if got := p.acquire(s.key); got != s.want {
			t.Fatalf("step %d: acquire(%s) = %v, want %v", i, s.key, got, s.want)
		}
	}
	if p.count() != 3 {
		t.Fatalf("count %d, want 3", p.count())
	}
	for _, k := range []string{a, c, c} {
		p.release(k)
	}
	if p.count() != 0 || len(p.byAddr) != 0 {
		t.Fatalf("after releasing all: count %d, table %v", p.count(), p.byAddr)
	}
	unlimited := newPendingConns(-1, -1)
	for range 1000 {
		if !unlimited.acquire(c) {
			t.Fatal("no limit refused a connection")
		}
	}
}
