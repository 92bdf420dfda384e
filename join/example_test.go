package join_test

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"time"

	"github.com/lockhost/lockhost/host"
	"github.com/lockhost/lockhost/join"
	"github.com/lockhost/lockhost/lockstep"
	"github.com/lockhost/lockhost/lockstep/locksteptest"
)

// ExampleJoin joins a session hosted on a loopback port, plays one
// command and reads the game's state once the host's tick applied it.
// The game is lockstep/locksteptest's (maps holding a number); lockstep's
// Example shows such a game written out.
func ExampleJoin() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	quiet := slog.New(slog.DiscardHandler)

	// A host to join (see package host's Example for hosting).
	addr, served, err := serveCounters(ctx, quiet)
	if err != nil {
		fmt.Println(err)
		return
	}

	// Join: the handshake, the world's download, loading it with the
	// game's Loader and catching up. OnApply sees every command the
	// session applies, in the host's order.
	applied := make(chan lockstep.Command, 1)
	sess, err := join.Join(ctx, join.Config{
		Addr: addr, Name: "Alice", Logger: quiet,
		Loader:  locksteptest.Load,
		OnApply: func(c lockstep.Command) { applied <- c },
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("joined", sess.Info().GameName, "as Alice")

	// Run follows the host's ticks until ctx ends, then leaves the session.
	ran := make(chan error, 1)
	go func() { ran <- sess.Run(ctx) }()

	// A command goes to the host, which stamps it with a tick and sends
	// it to every player, this one included.
	if err := sess.Send(0, locksteptest.KindAdd, []byte{5}); err != nil {
		fmt.Println(err)
		return
	}
	c := <-applied
	fmt.Println("applied: kind", c.Kind, "from player", c.Player)

	// Do runs a function on the goroutine that owns the game.
	value := make(chan int64, 1)
	sess.Do(func(sim lockstep.Sim) { value <- sim.(*locksteptest.Counters).Value(0) })
	fmt.Println("map 0 holds", <-value)

	cancel()
	fmt.Println("left:", <-ran)
	<-served
	// Output:
	// joined counters as Alice
	// applied: kind 1 from player 1
	// map 0 holds 5
	// left: <nil>
}

// ExampleReconnector stays in a session over dropped connections: the
// Reconnector joins, and its Run follows the session, rejoining with the
// session token after a drop (joined then receives the new session)
// until ctx ends.
func ExampleReconnector() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	quiet := slog.New(slog.DiscardHandler)
	addr, served, err := serveCounters(ctx, quiet)
	if err != nil {
		fmt.Println(err)
		return
	}

	rc := &join.Reconnector{
		Config: join.Config{Addr: addr, Name: "Alice", Loader: locksteptest.Load, Logger: quiet},
		For:    time.Minute, // give up a minute after a drop
		Event: func(e join.ReconnectEvent) {
			if e.Kind == join.ReconnectLost {
				fmt.Println("connection lost:", e.Err)
			}
		},
	}
	sess, err := rc.Join(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("joined as player", sess.Info().PlayerID)
	ran := make(chan error, 1)
	go func() {
		ran <- rc.Run(ctx, sess, func(s *join.Session) { fmt.Println("rejoined as player", s.Info().PlayerID) })
	}()
	cancel()
	fmt.Println("left:", <-ran)
	<-served
	// Output:
	// joined as player 1
	// left: <nil>
}

// serveCounters hosts lockstep/locksteptest's game on a loopback port
// until ctx ends, for the Examples to join: the setup package host's
// ExampleServer walks through. served reports Serve's result.
func serveCounters(ctx context.Context, log *slog.Logger) (addr string, served <-chan error, err error) {
	srv, err := host.New(host.Config{GameName: "counters", Logger: log},
		host.Content{GameVersion: "counters 1"}, locksteptest.New(1, 0))
	if err != nil {
		return "", nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	return ln.Addr().String(), done, nil
}
