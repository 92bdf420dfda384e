package host_test

import (
	"context"
	"fmt"
	"log/slog"
	"net"

	"github.com/lockhost/lockhost/host"
	"github.com/lockhost/lockhost/join"
	"github.com/lockhost/lockhost/lockstep/locksteptest"
)

// ExampleServer hosts a tiny game (one map holding a number, from
// lockstep/locksteptest; lockstep's Example shows such a game written out)
// on a loopback port, lets a player join, and speaks to the session as
// its operator: who is on, and a line of chat everyone hears.
func ExampleServer() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	quiet := slog.New(slog.DiscardHandler)

	// The host: a game's starting state, what it tells joiners about its
	// content (here only a version), and a listener to serve on.
	srv, err := host.New(host.Config{GameName: "counters", Logger: quiet},
		host.Content{GameVersion: "counters 1"}, locksteptest.New(1, 0))
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

	// A player joins (see package join) and hears the session's chat.
	heard := make(chan join.ChatLine, 1)
	sess, err := join.Join(ctx, join.Config{
		Addr: ln.Addr().String(), Name: "Alice", Logger: quiet,
		Loader: locksteptest.Load,
		Chat:   func(c join.ChatLine) { heard <- c },
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	go sess.Run(ctx)

	// The operator's side: the same calls the console, RCON and package
	// admin make.
	players, err := srv.Players()
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, p := range players {
		fmt.Println("on the host:", p.Name)
	}
	if err := srv.Say("host", "welcome"); err != nil {
		fmt.Println(err)
		return
	}
	c := <-heard
	from := c.From
	if from == "" {
		from = "the host" // a line of the operator's
	}
	fmt.Printf("Alice hears %s: %s\n", from, c.Text)

	cancel()
	fmt.Println("served:", <-served)
	// Output:
	// on the host: Alice
	// Alice hears the host: welcome
	// served: <nil>
}
