package host_test

import (
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lockhost/lockhost/host"
	"github.com/lockhost/lockhost/lockstep/locksteptest"
	"github.com/lockhost/lockhost/testing/testkit"
	"github.com/lockhost/lockhost/wire"
)

// recordingObserver keeps what a host.Observer hears.
type recordingObserver struct {
	mu      sync.Mutex
	joins   []host.JoinRecord
	desyncs []host.DesyncRecord
	saves   []host.SaveRecord
}

func (o *recordingObserver) JoinFinished(r host.JoinRecord) {
	o.mu.Lock()
	o.joins = append(o.joins, r)
	o.mu.Unlock()
}

func (o *recordingObserver) Desync(r host.DesyncRecord) {
	o.mu.Lock()
	o.desyncs = append(o.desyncs, r)
	o.mu.Unlock()
}

func (o *recordingObserver) Saved(r host.SaveRecord) {
	o.mu.Lock()
	o.saves = append(o.saves, r)
	o.mu.Unlock()
}

func (o *recordingObserver) snapshot() (joins []host.JoinRecord, saves []host.SaveRecord) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return slices.Clone(o.joins), slices.Clone(o.saves)
}

// TestOverviewAndObserver joins two players and refuses a third, then
// checks what a status page would show: both players playing, the tick
// advancing with a measured rate, every map with its size and a hash
// check, the joins with all their phases, the refusal with its reason,
// an autosave, and the counters.
func TestOverviewAndObserver(t *testing.T) {
	obs := &recordingObserver{}
	save := filepath.Join(t.TempDir(), "world.lhsave")
	h := startHost(t, host.Config{
		TickRate: 100, Observer: obs,
		Save:   host.SaveConfig{Path: save, Every: 300 * time.Millisecond},
		Desync: host.DesyncConfig{HashEvery: 10},
	}, locksteptest.New(3, 1024))
	a := startJoiner(t, h.addr, "Alice")
	startJoiner(t, h.addr, "Bob")
	// A join is recorded after its last clock sync, a little after the
	// joiner reports WorldReady.
	testkit.WaitFor(t, "both joins recorded", func() bool { return len(h.srv.Overview().Joins) == 2 })
	re := rejection(t, joinCfg(h.addr, "alice", newHashLog()))
	if re.Reason != wire.ReasonUsernameAlreadyOnline {
		t.Fatalf("third join refused with %v", re.Reason)
	}
	for i := range 5 {
		if err := a.sess.Send(int32(i%3), locksteptest.KindAdd, []byte{byte(i)}); err != nil {
			t.Fatal(err)
		}
	}

	var o host.Overview
	testkit.WaitFor(t, "an overview with two players checked and saved", func() bool {
		o = h.srv.Overview()
		if len(o.Players) != 2 || o.LastSave == nil || o.Stats.Commands < 5 || o.TicksPerSecond == 0 {
			return false
		}
		for _, m := range o.Maps {
			if m.CheckedTick == 0 || m.Bytes == 0 {
				return false
			}
		}
		return true
	})
	if o.Game == "" || o.TickRate != 100 || o.Speed != 1 || o.HashEvery != 10 || o.MaxPlayers == 0 {
		t.Errorf("session facts %+v", o)
	}
	// The measured rate is non-zero (waited for above); how close it comes
	// to 100 is the machine's business, and tickRate's arithmetic is
	// tested on its own. A playing member is never more than MaxLag+1
	// (default 121) ticks behind the tick the overview is taken at.
	for i, want := range []string{"Alice", "Bob"} {
		p := o.Players[i]
		if p.Name != want || p.Status != "playing" || p.Spectator || p.Since.IsZero() || p.TicksBehind > 121 {
			t.Errorf("player %d: %+v, want %s playing and close to the host", i, p, want)
		}
	}
	if len(o.Maps) != 3 {
		t.Fatalf("maps %+v, want 3", o.Maps)
	}
	for _, m := range o.Maps {
		if !m.Matched || m.RawBytes < m.Bytes/2 || m.CheckedTick%10 != 0 || m.CheckedAt.IsZero() {
			t.Errorf("map %+v: want a matched check at a multiple of 10 and both sizes", m)
		}
	}
	if o.Stats.BytesSent == 0 || o.LastSave.Err != "" || o.LastSave.Bytes == 0 || o.LastSave.Tick == 0 {
		t.Errorf("bytes sent %d, last save %+v", o.Stats.BytesSent, o.LastSave)
	}

	// Newest first: the refusal, then Alice's and Bob's (in either order:
	// the two joins overlap).
	if len(o.Joins) != 3 {
		t.Fatalf("joins %+v, want 3", o.Joins)
	}
	refused := o.Joins[0]
	slices.SortFunc(o.Joins[1:], func(a, b host.JoinRecord) int { return strings.Compare(a.Name, b.Name) })
	if refused.Outcome != host.JoinRefused || refused.Reason != wire.ReasonUsernameAlreadyOnline.String() || refused.Name != "alice" {
		t.Errorf("refusal %+v", refused)
	}
	if got := phaseNames(refused.Phases); !slices.Equal(got, host.JoinPhases[:2]) {
		t.Errorf("refusal's phases %v, want %v", got, host.JoinPhases[:2])
	}
	for i, want := range []string{"Alice", "Bob"} {
		j := o.Joins[1+i]
		if j.Name != want || j.Outcome != host.JoinOK || j.Reason != "" || j.Bytes == 0 || j.Remote == "" {
			t.Errorf("join of %s: %+v", want, j)
		}
		if got := phaseNames(j.Phases); !slices.Equal(got, host.JoinPhases) {
			t.Errorf("%s's phases %v, want %v", want, got, host.JoinPhases)
		}
		var sum time.Duration
		for _, ph := range j.Phases {
			sum += ph.D
		}
		if sum > j.Total || sum < j.Total/2 {
			t.Errorf("%s's phases add to %v of %v", want, sum, j.Total)
		}
	}

	// The observer heard the same joins and the saves.
	joins, saves := obs.snapshot()
	if len(joins) != 3 || joins[2].Outcome != host.JoinRefused || joins[0].Outcome != host.JoinOK || joins[1].Outcome != host.JoinOK {
		t.Errorf("observer heard joins %+v", joins)
	}
	if len(saves) == 0 || saves[0].Path == save || saves[0].D <= 0 {
		t.Errorf("observer heard saves %+v, want autosaves beside %s", saves, save)
	}
}

func phaseNames(ps []host.PhaseTime) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.Phase)
	}
	return out
}
