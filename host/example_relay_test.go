package host_test

import (
	"context"
	"fmt"
	"log/slog"
	"net"

	"github.com/lockhost/lockhost/host"
	"github.com/lockhost/lockhost/join"
	"github.com/lockhost/lockhost/lockstep"
	"github.com/lockhost/lockhost/lockstep/locksteptest"
)

// ExampleNewRelay hosts a game the host does not run (relay mode,
// docs/protocol.md section 14): the arbiter, a client that knows the
// secret, uploads the new session's world; a player then joins from the
// arbiter's world and plays. The game here is lockstep/locksteptest's,
// but the host never links it: any client that speaks the protocol, in
// any language, can be the arbiter.
func ExampleNewRelay() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	quiet := slog.New(slog.DiscardHandler)
	secret := []byte("a long random arbiter secret")

	srv, err := host.NewRelay(host.Config{GameName: "counters", Logger: quiet,
		Relay: host.RelayConfig{ArbiterSecret: secret}}, host.Content{GameVersion: "counters 1"})
	if err != nil {
		fmt.Println(err)
		return
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Println(err)
		return
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, ln) }()

	// The arbiter proves the secret and, the session being new, uploads
	// the world World makes; then it plays like anyone else.
	played := make(chan lockstep.Command, 1)
	arbiter, err := join.Join(ctx, join.Config{Addr: ln.Addr().String(), Name: "Arbiter", Logger: quiet,
		Loader: locksteptest.Load, ArbiterSecret: secret,
		World: func() (lockstep.Sim, error) { return locksteptest.New(2, 0), nil },
		OnApply: func(c lockstep.Command) {
			select {
			case played <- c:
			default: // only the first is awaited
			}
		}})
	if err != nil {
		fmt.Println(err)
		return
	}
	go arbiter.Run(ctx)
	if err := arbiter.Send(1, locksteptest.KindAdd, []byte{7}); err != nil {
		fmt.Println(err)
		return
	}
	<-played // stamped by the host and applied: in every later join point

	// A player's world comes from the arbiter: the host asks it for a
	// join point when one is needed.
	applied := make(chan lockstep.Command, 1)
	alice, err := join.Join(ctx, join.Config{Addr: ln.Addr().String(), Name: "Alice", Logger: quiet,
		Loader: locksteptest.Load, OnApply: func(c lockstep.Command) {
			if c.MapID == 0 {
				applied <- c // Alice's own, the only one on map 0
			}
		}})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("Alice joined", alice.Info().GameName, "with", len(alice.Sim().MapIDs()), "maps")
	go alice.Run(ctx) // the world is Run's from here on
	if err := alice.Send(0, locksteptest.KindAdd, []byte{5}); err != nil {
		fmt.Println(err)
		return
	}
	<-applied
	values := make(chan [2]int64, 1)
	alice.Do(func(sim lockstep.Sim) {
		c := sim.(*locksteptest.Counters)
		values <- [2]int64{c.Value(0), c.Value(1)}
	})
	fmt.Println("Alice's maps hold", <-values)

	cancel()
	fmt.Println("served:", <-served)
	// Output:
	// Alice joined counters with 2 maps
	// Alice's maps hold [5 7]
	// served: <nil>
}
