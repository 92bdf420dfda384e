package hosttest_test

import (
	"net"
	"testing"
	"time"

	"github.com/lockhost/lockhost/host"
	"github.com/lockhost/lockhost/join"
	"github.com/lockhost/lockhost/lockstep/locksteptest"
	"github.com/lockhost/lockhost/testing/hosttest"
	"github.com/lockhost/lockhost/testing/testkit"
)

// TestConfigKeepsWhatIsSet: Config fills only what is unset.
func TestConfigKeepsWhatIsSet(t *testing.T) {
	c := hosttest.Config(host.Config{Admission: host.AdmissionConfig{ConnRate: 3}})
	if c.Logger == nil || c.Admission.ConnRate != 3 || c.Admission.MaxPendingPerAddr != -1 || c.Admission.MaxPendingPerPrefix != -1 || c.Admission.PasswordRate != -1 {
		t.Fatalf("got logger %v, conn rate %v, pending per address %d and network %d, password rate %v",
			c.Logger != nil, c.Admission.ConnRate, c.Admission.MaxPendingPerAddr, c.Admission.MaxPendingPerPrefix, c.Admission.PasswordRate)
	}
}

// TestStartAndJoin: a started host takes two joiners from one address at
// once; leaving ends Run without error and the host sees them go.
func TestStartAndJoin(t *testing.T) {
	h := hosttest.Start(t, host.Config{}, host.Content{GameVersion: "1.5"}, locksteptest.New(2, 256))
	cfg := join.Config{Addr: h.Addr, Name: "Alice", Loader: locksteptest.Load}
	a := hosttest.Join(t, cfg)
	cfg.Name = "Bob"
	b := hosttest.Join(t, cfg)
	if a.Session.Info().PlayerID == b.Session.Info().PlayerID {
		t.Fatal("both joiners got one player ID")
	}
	testkit.WaitFor(t, "both players online", func() bool { return len(a.Session.Players()) == 2 })
	b.Leave()
	if err := b.Err(); err != nil {
		t.Fatalf("Run after Leave: %v", err)
	}
	testkit.WaitFor(t, "Bob gone from Alice's list", func() bool { return len(a.Session.Players()) == 1 })
}

// TestStop: Stop ends the session (the joiner's Run returns) and may be
// called again, as the test's end does.
func TestStop(t *testing.T) {
	h := hosttest.Start(t, host.Config{}, host.Content{}, locksteptest.New(1, 64))
	a := hosttest.Join(t, join.Config{Addr: h.Addr, Name: "Alice", Loader: locksteptest.Load})
	h.Stop(t)
	<-a.Done()
	if a.Err() == nil {
		t.Fatal("Run returned nil when the host stopped")
	}
	h.Stop(t)
}

// TestWait: Wait returns once a shutdown command has ended Serve: the
// host no longer listens and its player's session ends.
func TestWait(t *testing.T) {
	h := hosttest.Start(t, host.Config{}, host.Content{}, locksteptest.New(1, 64))
	a := hosttest.Join(t, join.Config{Addr: h.Addr, Name: "Alice", Loader: locksteptest.Load})
	if err := h.Server.Shutdown("test", 50*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	h.Wait(t)
	if c, err := net.Dial("tcp", h.Addr); err == nil {
		c.Close()
		t.Fatal("the host still listens after Wait")
	}
	select {
	case <-a.Done():
	case <-time.After(testkit.DefaultWait): // bounds a hang only
		t.Fatal("the player's session did not end after the shutdown")
	}
	if a.Err() == nil {
		t.Fatal("Run returned nil when the host shut down")
	}
}
