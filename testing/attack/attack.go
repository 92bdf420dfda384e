// Package attack plays the handshake attacks of many addresses against a
// host on loopback, for the host's tests and the attack benchmark in
// scripts/: connections that stall at one step of the handshake, and
// password guessing. Each attacker is its own loopback source address
// (127.0.0.0/8 is all loopback on Linux), one per /24, so neither the
// per-address nor the per-prefix limits hide the attack; each keeps its
// connection open until the host closes it, then opens another.
package attack

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lockhost/lockhost/password"
	"github.com/lockhost/lockhost/wire"
)

// Kind is what an attacker does with each connection.
type Kind int

// The attacks: four ways to stall in the handshake, and guessing.
const (
	// Silent connects and sends nothing.
	Silent Kind = iota
	// Protocol sends Client_Protocol and nothing more.
	Protocol
	// Header sends a frame header declaring a body, and no body.
	Header
	// AfterDefsOK runs the handshake up to Server_DefsOK and stops.
	AfterDefsOK
	// Guess runs the handshake and sends a wrong password's proof, again
	// and again.
	Guess
	// ArbiterGuess runs the handshake with a relay host and sends a wrong
	// arbiter proof (docs/protocol.md, section 14.2), again and again.
	ArbiterGuess
)

// Kinds lists every Kind a host with a password meets, in order: all
// but ArbiterGuess, which only a relay host answers.
var Kinds = []Kind{Silent, Protocol, Header, AfterDefsOK, Guess}

func (k Kind) String() string {
	switch k {
	case Silent:
		return "silent"
	case Protocol:
		return "protocol-then-stop"
	case Header:
		return "header-no-body"
	case AfterDefsOK:
		return "stop-after-defsok"
	case Guess:
		return "password-guessing"
	case ArbiterGuess:
		return "arbiter-secret-guessing"
	}
	return fmt.Sprintf("kind(%d)", int(k))
}

// Config is an attack.
type Config struct {
	// Addr is the host's address.
	Addr string
	// Kind is the attack.
	Kind Kind
	// Sources is how many attackers (source addresses) there are.
	Sources int
	// Databases are the def databases declared (for AfterDefsOK and
	// Guess): the host's, so the handshake goes on.
	Databases []wire.DefSummary
	// Pause is how long an attacker waits before it reconnects (default
	// 250 ms: within the host's default connection rate per address).
	Pause time.Duration
	// Solvers is how many guesses are under way at once, all addresses
	// together, each solving the host's puzzle if it sets one: the
	// attacker's hashing power, in cores. A guesser waits for a solver
	// before it connects. With none, guesses are not limited and a guess
	// the host set a puzzle goes without a solution.
	Solvers int
}

// Stats is what an attack did and cost.
type Stats struct {
	// Conns counts the connections opened.
	Conns atomic.Int64
	// Sent and Received count the bytes written and read.
	Sent, Received atomic.Int64
	// Checked counts wrong guesses the host checked (refused as
	// BadPassword, or BadArbiterSecret for ArbiterGuess); Refused counts
	// guesses refused unchecked.
	Checked, Refused atomic.Int64
	// DialErrors counts connections that could not be opened.
	DialErrors atomic.Int64
	// Puzzles counts the password puzzles set to the guessers, Solved
	// those they solved; Hashes is the hashes that took and SolveTime
	// the time spent hashing, in nanoseconds (CPU time, one core each).
	Puzzles, Solved, Hashes, SolveTime atomic.Int64
}

// Source is attacker i's loopback address: 127.a.b.1, each in a /24 of
// its own (i below 65,280).
func Source(i int) net.IP { return net.IPv4(127, byte(1+i/256), byte(i%256), 1) }

// Run runs the attack until ctx is done and returns what it did. It
// waits for every attacker to stop.
func Run(ctx context.Context, cfg Config) *Stats {
	if cfg.Pause == 0 {
		cfg.Pause = 250 * time.Millisecond
	}
	st := &Stats{}
	var wg sync.WaitGroup
	solvers := make(chan struct{}, max(1, cfg.Solvers))
	for i := 0; i < cfg.Sources; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			a := attacker{cfg: cfg, st: st, src: Source(i), solvers: solvers}
			a.loop(ctx)
		}()
	}
	wg.Wait()
	return st
}

// Start runs the attack in the background; stop ends it and returns what
// it did.
func Start(cfg Config) (stop func() *Stats) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan *Stats, 1)
	go func() { done <- Run(ctx, cfg) }()
	return func() *Stats {
		cancel()
		return <-done
	}
}

type attacker struct {
	cfg     Config
	st      *Stats
	src     net.IP
	solvers chan struct{} // a token per guess under way, with Solvers
}

func (a *attacker) loop(ctx context.Context) {
	for ctx.Err() == nil {
		a.once(ctx)
		t := time.NewTimer(a.cfg.Pause)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
		}
	}
}

// counted counts the bytes through a connection.
type counted struct {
	net.Conn
	st *Stats
}

func (c counted) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	c.st.Received.Add(int64(n))
	return n, err
}

func (c counted) Write(b []byte) (int, error) {
	n, err := c.Conn.Write(b)
	c.st.Sent.Add(int64(n))
	return n, err
}

// once opens one connection, plays the attack on it and holds it until
// the host closes it or ctx is done.
func (a *attacker) once(ctx context.Context) {
	if (a.cfg.Kind == Guess || a.cfg.Kind == ArbiterGuess) && a.cfg.Solvers > 0 {
		select {
		case a.solvers <- struct{}{}:
			defer func() { <-a.solvers }()
		case <-ctx.Done():
			return
		}
	}
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: a.src}, Timeout: 5 * time.Second}
	raw, err := d.DialContext(ctx, "tcp", a.cfg.Addr)
	if err != nil {
		if ctx.Err() == nil {
			a.st.DialErrors.Add(1)
		}
		return
	}
	a.st.Conns.Add(1)
	stop := context.AfterFunc(ctx, func() { raw.Close() })
	defer stop()
	defer raw.Close()
	nc := counted{Conn: raw, st: a.st}
	c := &client{nc: nc, fr: wire.NewFrameReader(bufio.NewReader(nc), wire.DefaultMaxFrame)}
	switch a.cfg.Kind {
	case Silent:
	case Protocol:
		c.send(&wire.ClientProtocol{Protocol: wire.ProtocolVersion})
	case Header:
		_, _ = nc.Write([]byte{0, 0, 0, 100, byte(wire.IDClientProtocol)})
	case AfterDefsOK:
		if _, err := c.toDefsOK(a.cfg.Databases); err != nil {
			return
		}
	case Guess, ArbiterGuess:
		ml, err := c.toDefsOK(a.cfg.Databases)
		if err != nil {
			return
		}
		a.guess(ctx, c, ml)
		return
	}
	c.drain() // until the host closes it
}

// guess sends a wrong proof (a password's, or for ArbiterGuess an
// arbiter secret's), with the puzzle solved if it was set and the attack
// solves puzzles, and reads the host's answer.
func (a *attacker) guess(ctx context.Context, c *client, ml *wire.ServerModList) {
	var nonce uint64
	challenge, checked := ml.PasswordChallenge, wire.ReasonBadPassword
	u := &wire.ClientUsername{Name: "Mallory", PasswordProof: password.Proof([]byte("not the password"), ml.PasswordChallenge)}
	if a.cfg.Kind == ArbiterGuess {
		challenge, checked = ml.ArbiterChallenge, wire.ReasonBadArbiterSecret
		u = &wire.ClientUsername{Name: "Mallory", ArbiterProof: password.ArbiterProof([]byte("not the secret"), ml.ArbiterChallenge)}
	}
	if ml.PuzzleBits > 0 {
		a.st.Puzzles.Add(1)
		if a.cfg.Solvers > 0 {
			start := time.Now()
			n, tried, err := password.SolvePuzzle(ctx, challenge, int(ml.PuzzleBits))
			a.st.SolveTime.Add(int64(time.Since(start)))
			a.st.Hashes.Add(int64(tried))
			if err != nil {
				return
			}
			a.st.Solved.Add(1)
			nonce = n
		}
	}
	u.PuzzleNonce = nonce
	c.send(u)
	for {
		p, err := c.next()
		if err != nil {
			return
		}
		if d, ok := p.(*wire.ServerDisconnect); ok {
			if d.Reason == checked {
				a.st.Checked.Add(1)
			} else {
				a.st.Refused.Add(1)
			}
			return
		}
	}
}

// client is the attacker's side of one connection.
type client struct {
	nc net.Conn
	fr *wire.FrameReader
}

func (c *client) send(p wire.Packet) { _, _ = c.nc.Write(wire.MustMarshal(p)) }

// next reads and decodes the next packet.
func (c *client) next() (wire.Packet, error) {
	id, body, err := c.fr.Next()
	if err != nil {
		return nil, err
	}
	return wire.Decode(id, body)
}

// toDefsOK runs the handshake up to Server_DefsOK, answering the clock
// rounds, and returns the mod list (with the password challenge).
func (c *client) toDefsOK(dbs []wire.DefSummary) (*wire.ServerModList, error) {
	c.send(&wire.ClientProtocol{Protocol: wire.ProtocolVersion})
	var ml *wire.ServerModList
	for {
		p, err := c.next()
		if err != nil {
			return nil, err
		}
		switch p := p.(type) {
		case *wire.ServerModList:
			ml = p
			c.send(&wire.ClientDefs{Databases: dbs})
		case *wire.ServerClock:
			c.send(&wire.ClientClock{Nonce: p.Nonce, ClientTime: time.Now().UnixMicro()})
		case *wire.ServerDefsOK:
			if ml == nil {
				return nil, errors.New("DefsOK before the mod list")
			}
			return ml, nil
		case *wire.ServerDisconnect:
			return nil, fmt.Errorf("refused: %s", p.Reason)
		}
	}
}

// drain reads until the connection ends.
func (c *client) drain() {
	buf := make([]byte, 4096)
	for {
		if _, err := c.nc.Read(buf); err != nil {
			return
		}
	}
}
