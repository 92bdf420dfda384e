package ice_test

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/lockhost/lockhost/host"
	"github.com/lockhost/lockhost/join"
	"github.com/lockhost/lockhost/lockstep"
	"github.com/lockhost/lockhost/lockstep/locksteptest"
	"github.com/lockhost/lockhost/testing/testkit"
	"github.com/lockhost/lockhost/transport/ice"
)

// TestJoinOverICE: a real host serves its TCP port and an ICE listener in
// one session; the join package, dialling through ice.Dial with an
// in-memory signaller as a coordinator would carry it, reaches
// WorldReady, plays a command that the host applies, and the host lists
// the player from the candidate pair's loopback address.
func TestJoinOverICE(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cfg := ice.Config{LoopbackOnly: true, Timeout: 15 * time.Second}
	srv, err := host.New(host.Config{Logger: testkit.Quiet()}, host.Content{GameVersion: "counters 1"}, locksteptest.New(2, 0))
	if err != nil {
		t.Fatal(err)
	}
	tcp, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	iceLn := ice.NewListener(cfg)
	served := make(chan error, 1)
	go func() { served <- srv.ServeListeners(ctx, &host.Listeners{TCP: tcp, Extra: []net.Listener{iceLn}}) }()

	joinerSig, hostSig := ice.Pipe()
	answered := make(chan error, 1)
	go func() {
		path, err := iceLn.Answer(ctx, hostSig)
		if err == nil && path != ice.PathDirect {
			t.Errorf("the host's path %q, want %q", path, ice.PathDirect)
		}
		answered <- err
	}()
	var joinPath ice.Path
	dial := func(ctx context.Context, addr string) (net.Conn, error) {
		nc, path, err := ice.Dial(ctx, joinerSig, cfg)
		joinPath = path
		return nc, err
	}
	applied := make(chan lockstep.Command, 1)
	jctx, jcancel := context.WithTimeout(ctx, 30*time.Second)
	defer jcancel()
	alice, err := join.Join(jctx, join.Config{Addr: "ice", Dial: dial, Name: "Alice", Logger: testkit.Quiet(),
		Loader: locksteptest.Load, OnApply: func(c lockstep.Command) {
			if c.MapID == 1 {
				applied <- c
			}
		}})
	if err != nil {
		t.Fatalf("join over ICE: %v", err)
	}
	defer alice.Close()
	if err := <-answered; err != nil {
		t.Fatalf("the host's answer: %v", err)
	}
	if joinPath != ice.PathDirect {
		t.Errorf("the joiner's path %q, want %q", joinPath, ice.PathDirect)
	}
	go alice.Run(ctx)
	if err := alice.Send(1, locksteptest.KindAdd, []byte{7}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-applied:
	case <-time.After(20 * time.Second):
		t.Fatal("Alice's command was not applied")
	}
	values := make(chan int64, 1)
	alice.Do(func(sim lockstep.Sim) { values <- sim.(*locksteptest.Counters).Value(1) })
	if v := <-values; v != 7 {
		t.Fatalf("map 1 holds %d after Alice's add of 7", v)
	}
	players, err := srv.Players()
	if err != nil {
		t.Fatal(err)
	}
	if len(players) != 1 || players[0].Name != "Alice" || !strings.HasPrefix(players[0].Addr, "127.0.0.1:") {
		t.Fatalf("players %+v, want Alice from 127.0.0.1", players)
	}
	cancel()
	if err := <-served; err != nil {
		t.Fatalf("served: %v", err)
	}
}
