package lockstep_test

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"net"

	"github.com/lockhost/lockhost/host"
	"github.com/lockhost/lockhost/join"
	"github.com/lockhost/lockhost/lockstep"
)

// kindAdd adds the payload's one byte to the counter. Games choose their
// kinds below lockstep.KindReserved.
const kindAdd uint16 = 1

// counter is a whole game: one map holding a sum. It has no def databases.
type counter struct {
	tick uint64
	sum  uint64
	// seen, if set, is told the sum after every step. It is not game
	// state: it is how the example watches each side.
	seen func(tick, sum uint64)
}

func (c *counter) Tick() uint64 { return c.tick }

func (c *counter) Apply(cmd lockstep.Command) error {
	if cmd.MapID != 0 || cmd.Kind != kindAdd || len(cmd.Payload) != 1 {
		return errors.New("counter: unknown command")
	}
	c.sum += uint64(cmd.Payload[0])
	return nil
}

func (c *counter) Step() {
	c.tick++
	if c.seen != nil {
		c.seen(c.tick, c.sum)
	}
}

func (c *counter) MapIDs() []int32 { return []int32{0} }

func (c *counter) MapHash(id int32) (uint64, bool) { return c.sum, id == 0 }

func (c *counter) WorldHash() uint64 { return c.tick<<32 ^ c.sum }

func (c *counter) MarshalWorld() ([]byte, error) { return binary.AppendUvarint(nil, c.tick), nil }

func (c *counter) MarshalMap(int32) ([]byte, error) { return binary.AppendUvarint(nil, c.sum), nil }

// loadCounter rebuilds a counter from untrusted bytes: the Loader.
func loadCounter(seen func(tick, sum uint64)) lockstep.Loader {
	return func(world []byte, maps []lockstep.MapBlob) (lockstep.Sim, error) {
		tick, n := binary.Uvarint(world)
		if n <= 0 || n != len(world) || len(maps) != 1 || maps[0].ID != 0 {
			return nil, errors.New("counter: malformed world")
		}
		sum, n := binary.Uvarint(maps[0].Data)
		if n <= 0 || n != len(maps[0].Data) {
			return nil, errors.New("counter: malformed map")
		}
		return &counter{tick: tick, sum: sum, seen: seen}, nil
	}
}

// firstNonZero returns a seen func that reports the first step with a
// non-zero sum on ch.
func firstNonZero(ch chan<- [2]uint64) func(tick, sum uint64) {
	done := false
	return func(tick, sum uint64) {
		if sum != 0 && !done {
			done = true
			ch <- [2]uint64{tick, sum}
		}
	}
}

// Example hosts a tiny game with package host, joins it over loopback with
// package join, sends one command and checks that both machines applied
// it at the same tick with the same result.
func Example() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	quiet := slog.New(slog.DiscardHandler)

	// Host: the game's starting state, and a listener.
	onHost := make(chan [2]uint64, 1)
	srv, err := host.New(host.Config{GameName: "counter", Logger: quiet},
		host.Content{GameVersion: "counter 1"}, &counter{seen: firstNonZero(onHost)})
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

	// Joiner: downloads the world, loads it with the Loader and catches
	// up; Run then follows the host's ticks.
	onJoiner := make(chan [2]uint64, 1)
	sess, err := join.Join(ctx, join.Config{
		Addr: ln.Addr().String(), Name: "Alice", Logger: quiet,
		Loader: loadCounter(firstNonZero(onJoiner)),
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("joined:", sess.Info().GameName)
	go sess.Run(ctx)

	// The host stamps the command with a tick and sends it to every
	// machine, the sender included.
	if err := sess.Send(0, kindAdd, []byte{5}); err != nil {
		fmt.Println(err)
		return
	}
	h, j := <-onHost, <-onJoiner
	fmt.Println("host sum:", h[1], "joiner sum:", j[1])
	fmt.Println("same tick:", h[0] == j[0])

	cancel()
	<-served
	// Output:
	// joined: counter
	// host sum: 5 joiner sum: 5
	// same tick: true
}
