package gate

import (
	"testing"
	"time"
)

// TestPendingConns: over a cap, the connection that has done least for
// longest is evicted (idle before slow before active), within the
// newcomer's address or network when that is at its share.
func TestPendingConns(t *testing.T) {
	t0 := time.Unix(1000, 0)
	p := NewPending(4, 2, 4)
	var killed []string
	add := func(ip string, at time.Duration) *Conn {
		return p.Acquire(ip, t0.Add(at), func() { killed = append(killed, ip) })
	}
	expectKilled := func(step string, want ...string) {
		t.Helper()
		if len(killed) != len(want) {
			t.Fatalf("%s: evicted %v, want %v", step, killed, want)
		}
		for i := range want {
			if killed[i] != want[i] {
				t.Fatalf("%s: evicted %v, want %v", step, killed, want)
			}
		}
		killed = nil
	}
	slow := add("192.0.2.1", 0)
	slow.Progress(t0.Add(100 * time.Millisecond))
	idle := add("192.0.2.2", 200*time.Millisecond)
	add("198.51.100.1", 300*time.Millisecond)
	active := add("203.0.113.1", 0)
	expectKilled("four in a table of four")
	// Full at +5 s: the idle one goes first, though the slow one is older.
	active.Progress(t0.Add(4500 * time.Millisecond))
	add("203.0.113.2", 5*time.Second)
	expectKilled("full", "192.0.2.2")
	if !idle.WasEvicted() || slow.WasEvicted() {
		t.Fatal("the wrong one evicted")
	}
	// Then the idle one of 198.51.100.1, then the slow one.
	add("203.0.113.3", 5*time.Second+time.Millisecond)
	expectKilled("full again", "198.51.100.1")
	add("203.0.113.4", 5*time.Second+2*time.Millisecond)
	expectKilled("full a third time", "192.0.2.1")
	// Past the newborn age, the three that made no step are idle: the
	// oldest of them goes, not .1, which made one.
	add("198.51.100.9", 5*time.Second+600*time.Millisecond)
	expectKilled("no step made", "203.0.113.2")
	// A newborn connection goes only when every other one is newborn too.
	young := NewPending(3, -1, -1)
	young.Acquire("192.0.2.1", t0, func() { killed = append(killed, "192.0.2.1") })
	born := young.Acquire("192.0.2.2", t0.Add(pendingNewborn), func() { killed = append(killed, "192.0.2.2") })
	born.Progress(t0.Add(pendingNewborn))
	young.Acquire("192.0.2.3", t0.Add(pendingNewborn+time.Millisecond), func() { killed = append(killed, "192.0.2.3") })
	young.Acquire("192.0.2.4", t0.Add(pendingNewborn+2*time.Millisecond), func() {})
	expectKilled("a newborn and an older one", "192.0.2.1")
	young.Acquire("192.0.2.5", t0.Add(pendingNewborn+3*time.Millisecond), func() {})
	expectKilled("all newborn", "192.0.2.2")
	if ev, _ := p.Evictions(); p.Count() != 4 || ev != 4 {
		t.Fatalf("count %d, evictions %d", p.Count(), ev)
	}
	// Per network: 10.0.0.0/24 at its share of two evicts its own oldest,
	// not the other network's, older still.
	n := NewPending(-1, -1, 2)
	n.Acquire("10.0.1.1", t0, func() { killed = append(killed, "10.0.1.1") })
	n.Acquire("10.0.0.1", t0.Add(time.Millisecond), func() { killed = append(killed, "10.0.0.1") })
	n.Acquire("10.0.0.2", t0.Add(2*time.Millisecond), func() { killed = append(killed, "10.0.0.2") })
	n.Acquire("10.0.0.3", t0.Add(time.Second), func() { killed = append(killed, "10.0.0.3") })
	expectKilled("network at its share", "10.0.0.1")

	// Per address: a third from one address evicts its own oldest, in a
	// table with room.
	q := NewPending(-1, 2, -1)
	a1 := q.Acquire("2001:db8::1", t0, func() { killed = append(killed, "a1") })
	q.Acquire("2001:db8::2", t0.Add(time.Millisecond), func() { killed = append(killed, "a2") }) // the same /64
	q.Acquire("2001:db8:1::1", t0, func() { killed = append(killed, "b") })
	q.Acquire("2001:db8::3", t0.Add(time.Second), func() { killed = append(killed, "a3") })
	expectKilled("address at its share", "a1")
	a1.Release() // after an eviction: nothing
	if q.Count() != 3 {
		t.Fatalf("count %d, want 3", q.Count())
	}
	// setKill after an eviction closes at once.
	ran := false
	a1.SetKill(func() { ran = true })
	if !ran {
		t.Fatal("setKill on an evicted connection did not close it")
	}

	unlimited := NewPending(-1, -1, -1)
	for range 1000 {
		unlimited.Acquire("192.0.2.1", t0, func() { t.Fatal("evicted with no limit") })
	}
	if unlimited.Count() != 1000 {
		t.Fatalf("count %d", unlimited.Count())
	}
}

// TestPendingPenalties: an address whose connection was evicted, or timed
// out, is refused for penaltyBase, doubling with each offence after a
// penalty ended, up to penaltyMax; a long quiet spell forgives.
func TestPendingPenalties(t *testing.T) {
	t0 := time.Unix(1000, 0)
	p := NewPending(1, -1, -1)
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	const s = time.Second
	p.Acquire("192.0.2.1", t0, func() {})
	if p.Acquire("192.0.2.2", at(s), func() {}) == nil {
		t.Fatal("the newcomer was refused")
	}
	// 192.0.2.1 was evicted at +1 s: refused for 2 s, less up to a
	// quarter.
	if p.Acquire("192.0.2.1", at(s+penaltyBase*3/4-time.Millisecond), func() {}) != nil {
		t.Fatal("a penalized address was let in")
	}
	if _, refused := p.Evictions(); refused != 1 {
		t.Fatalf("%d refused, want 1", refused)
	}
	c := p.Acquire("192.0.2.1", at(s+penaltyBase+time.Millisecond), func() {}) // evicts 192.0.2.2
	if c == nil {
		t.Fatal("still refused after the penalty")
	}
	// A timeout is an offence too; the second one is twice as long.
	c.Penalize(at(4 * s))
	c.Release()
	// Quiet (less than half full), a penalty is not enforced.
	if q := p.Acquire("192.0.2.1", at(4*s+time.Millisecond), func() {}); q == nil {
		t.Fatal("a penalty enforced with the table empty")
	} else {
		q.Release()
	}
	p.Acquire("198.51.100.50", at(4*s), func() {}) // the table is full again
	for _, tc := range []struct {
		at   time.Duration
		want bool
	}{
		{4*s + 2*penaltyBase*3/4 - time.Millisecond, false},
		{4*s + 2*penaltyBase + time.Millisecond, true},
	} {
		c := p.Acquire("192.0.2.1", at(tc.at), func() {})
		if (c != nil) != tc.want {
			t.Fatalf("at +%v: let in %v, want %v", tc.at, c != nil, tc.want)
		}
		if c != nil {
			c.Release()
		}
	}
	// An address penalized lately goes first among equals (the table of
	// two is pressed with one in it).
	r := NewPending(2, -1, -1)
	var gone []string
	r.Acquire("192.0.2.1", t0, func() {})
	r.Acquire("192.0.2.8", at(s), func() {})
	c9 := r.Acquire("192.0.2.9", at(2*s), func() { gone = append(gone, "192.0.2.9") })  // evicts .1: a record
	c1 := r.Acquire("192.0.2.1", at(10*s), func() { gone = append(gone, "192.0.2.1") }) // evicts .8
	c9.Progress(at(10*s + 600*time.Millisecond))
	c1.Progress(at(10*s + 700*time.Millisecond)) // both active; .9's progress is older
	r.Acquire("192.0.2.7", at(11*s), func() {})
	if len(gone) != 1 || gone[0] != "192.0.2.1" {
		t.Fatalf("evicted %v, want the address with a record", gone)
	}
	// An address at its own share evicts its own without a penalty.
	q := NewPending(-1, 1, -1)
	q.Acquire("198.51.100.1", t0, func() {})
	q.Acquire("198.51.100.1", at(s), func() {})
	if q.Acquire("198.51.100.1", at(2*s), func() {}) == nil {
		t.Fatal("an address was penalized for competing with itself")
	}
}

func TestPendingTimeoutShrinksUnderPressure(t *testing.T) {
	p := NewPending(10, -1, -1)
	t0 := time.Unix(1000, 0)
	for i, want := range []time.Duration{10, 10, 10, 10, 10, 10, 8, 6, 4, 2, 2} {
		if got := p.Timeout(10 * time.Second); got != want*time.Second {
			t.Fatalf("%d pending: timeout %v, want %v", i, got, want*time.Second)
		}
		p.Acquire("192.0.2.1", t0, func() {})
	}
}
