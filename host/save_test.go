package host_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/lockhost/lockhost/host"
	"github.com/lockhost/lockhost/join"
	"github.com/lockhost/lockhost/lockstep"
	"github.com/lockhost/lockhost/lockstep/locksteptest"
	"github.com/lockhost/lockhost/saves"
	"github.com/lockhost/lockhost/testing/hosttest"
	"github.com/lockhost/lockhost/testing/testkit"
)

// serveUntil runs a host on sim with cfg until stop is closed, then
// returns its stats (after the final save).
func serveFor(t *testing.T, cfg host.Config, sim lockstep.Sim, body func(addr string, srv *host.Server)) host.Stats {
	t.Helper()
	h := hosttest.Start(t, cfg, host.Content{Databases: testDefs}, sim)
	body(h.Addr, h.Server)
	h.Stop(t)
	if t.Failed() {
		t.FailNow()
	}
	return h.Server.Overview().Stats
}

// TestSaveLoadJoin: a session saved on exit loads into a new host at the
// tick it was saved at, and a joiner of that host has the host's hashes.
func TestSaveLoadJoin(t *testing.T) {
	path := filepath.Join(t.TempDir(), "colony.lhsave")
	sim := locksteptest.New(3, 1024)
	var savedTick uint64
	st := serveFor(t, host.Config{TickRate: 200, Save: host.SaveConfig{Path: path, Every: -1}}, sim, func(addr string, srv *host.Server) {
		a := startJoiner(t, addr, "Alice")
		for i := 0; i < 20; i++ {
			a.sess.Send(int32(i%3), locksteptest.KindAdd, []byte{byte(i + 1)})
		}
		time.Sleep(200 * time.Millisecond)
	})
	if st.Saves != 1 || st.SaveErrors != 0 {
		t.Fatalf("stats %+v: want the final save", st)
	}
	f, err := saves.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	savedTick = f.Meta.Tick
	loaded, err := saves.Load(f, locksteptest.Load, nil, 1<<30)
	if err != nil {
		t.Fatal(err)
	}
	if loaded.Tick() != savedTick || loaded.WorldHash() != sim.WorldHash() {
		t.Fatalf("loaded tick %d hash %x; the session ended at %d with %x", loaded.Tick(), loaded.WorldHash(), sim.Tick(), sim.WorldHash())
	}
	// A new host from the save, and a joiner of it.
	h := startHost(t, host.Config{}, loaded)
	testkit.WaitFor(t, "the loaded host to tick", func() bool { return h.log.latest() > savedTick })
	b := startJoiner(t, h.addr, "Bob", func(c *join.Config) { c.Loader, c.MapLoader = nil, locksteptest.MapLoader })
	checkSameHashes(t, h, h.log.latest()+10, b)
}

// TestSaveFailureKeepsSession: when the save location cannot be written,
// the save fails with a clear error, the session keeps ticking and the
// previous save still loads.
func TestSaveFailureKeepsSession(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "saves")
	os.Mkdir(dir, 0o755)
	path := filepath.Join(dir, "colony.lhsave")
	var ticks []uint64
	st := serveFor(t, host.Config{TickRate: 200, Save: host.SaveConfig{Path: path, Every: 100 * time.Millisecond, Keep: 2},
		AfterTick: func(res lockstep.TickResult, _ lockstep.Sim) { ticks = append(ticks, res.Tick) }},
		locksteptest.New(2, 256), func(addr string, srv *host.Server) {
			testkit.WaitFor(t, "a first autosave", func() bool { return srv.Overview().Stats.Saves >= 1 })
			// The folder goes away and a file takes its place: nothing can
			// be written there any more.
			moved := dir + ".kept"
			if err := os.Rename(dir, moved); err != nil {
				t.Fatal(err)
			}
			os.WriteFile(dir, []byte("not a folder"), 0o644)
			testkit.WaitFor(t, "a failed autosave", func() bool { return srv.Overview().Stats.SaveErrors >= 1 })
			before := srv.Overview().Stats
			time.Sleep(200 * time.Millisecond)
			if srv.Overview().Stats.SaveErrors == before.SaveErrors {
				t.Log("no second failure yet; fine")
			}
			// The earlier autosave, now in the moved folder, still loads.
			autos, _ := filepath.Glob(filepath.Join(moved, "*.lhsave"))
			if len(autos) == 0 {
				t.Fatal("no earlier autosave kept")
			}
			if f, err := saves.Read(autos[0]); err != nil {
				t.Fatal(err)
			} else if _, err := saves.Load(f, locksteptest.Load, nil, 1<<30); err != nil {
				t.Fatal(err)
			}
		})
	if st.SaveErrors == 0 || st.LastSaveError == "" {
		t.Fatalf("stats %+v: want failed saves with a reason", st)
	}
	t.Logf("save error: %s", st.LastSaveError)
	if n := len(ticks); n < 60 || !slices.IsSorted(ticks) {
		t.Fatalf("the session did not keep ticking: %d ticks", n)
	}
}
