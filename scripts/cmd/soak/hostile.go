package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lockhost/lockhost/host"
	"github.com/lockhost/lockhost/snapshot"
	"github.com/lockhost/lockhost/testing/rawconn"
	"github.com/lockhost/lockhost/wire"
)

// The hostile clients run beside the bots during the chaos, each from its
// own loopback address (127.0.0.0/8 is all loopback on Linux), so the
// host's per-address limits see them apart from the bots:
//
//   - squatters take a player slot and acknowledge the world a byte at a
//     time: the minimum download rate must drop them (Timeout);
//   - a lag griefer is admitted and never advances: MaxHold must drop it
//     (Lagging) and the cool-down refuse its rejoin;
//   - a desync looper reports a wrong hash and ignores the repair: the
//     repair timeout must drop it (Desync) and the cool-down refuse its
//     rejoin;
//   - a flood connects and closes as fast as it may.
//
// The soak's checks then demand that the bots stayed in sync and the host
// did not grow, as without them.

// hostileCounts are what the hostile clients saw, safe from any goroutine.
type hostileCounts struct {
	squatDrops, lagDrops, lagRefused, desyncDrops, desyncRefused, flood atomic.Int64
	// looperDetected and looperDropped are the host's desync events for
	// the looper (its Observer hears them), to tell them from the bots'.
	looperDetected, looperDropped atomic.Int64

	mu         sync.Mutex
	unexpected []string // outcomes the host should not have given
}

func (h *hostileCounts) odd(format string, args ...any) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.unexpected) < 5 {
		h.unexpected = append(h.unexpected, fmt.Sprintf(format, args...))
	}
}

// hostileAddrs are the loopback addresses the hostile clients come from.
const (
	squatFrom  = "127.0.0.2"
	lagFrom    = "127.0.0.3"
	desyncFrom = "127.0.0.4"
	floodFrom  = "127.0.0.5"
)

// hostiles runs the hostile clients against addr until ctx ends, and
// waits for them.
func (s *soak) hostiles(ctx context.Context, addr string) {
	var wg sync.WaitGroup
	run := func(f func()) { wg.Add(1); go func() { defer wg.Done(); f() }() }
	for i := range hostileSquatters {
		run(func() { s.squatter(ctx, addr, i) })
	}
	run(func() { s.lagGriefer(ctx, addr) })
	run(func() { s.desyncLooper(ctx, addr) })
	run(func() { s.flood(ctx, addr) })
	wg.Wait()
}

// hostileSquatters is how many squatters run at once.
const hostileSquatters = 3

// rawConn speaks the protocol by hand, as a misbehaving client would.
type rawConn struct{ *rawconn.Conn }

func dialFrom(ctx context.Context, from, addr string) (*rawConn, error) {
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}, Timeout: 5 * time.Second}
	nc, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	go func() { <-ctx.Done(); nc.Close() }()
	return &rawConn{rawconn.New(nc)}, nil
}

// refused is the host's disconnect, as an error.
type refused struct{ d *wire.ServerDisconnect }

func (r *refused) Error() string { return fmt.Sprintf("%s: %s", r.d.Reason, r.d.Message) }

// reasonOf is the reason of a host's disconnect in err, if any.
func reasonOf(err error) (wire.Reason, string, bool) {
	var r *refused
	if errors.As(err, &r) {
		return r.d.Reason, r.d.Message, true
	}
	return 0, "", false
}

// admit runs the handshake up to the first world chunk: the session
// token and that chunk (whose Total is the world's size).
func (s *soak) admit(c *rawConn, name string, token []byte) ([]byte, *wire.ServerWorldData, error) {
	sum := s.bundle.Summary()
	dbs := make([]wire.DefSummary, len(sum))
	for i, d := range sum {
		dbs[i] = wire.DefSummary{Type: d.Type, Count: d.Count, Hash: d.Hash}
	}
	if err := c.Send(&wire.ClientProtocol{Protocol: wire.ProtocolVersion}); err != nil {
		return nil, nil, err
	}
	sentDefs, sentName := false, false
	var newToken []byte
	for {
		p, err := c.Next()
		if err != nil {
			return nil, nil, err
		}
		switch p := p.(type) {
		case *wire.ServerDisconnect:
			return nil, nil, &refused{p}
		case *wire.ServerModList:
			if !sentDefs {
				sentDefs = true
				err = c.Send(&wire.ClientDefs{Databases: dbs})
			}
		case *wire.ServerDefsOK:
			if !sentName {
				sentName = true
				err = c.Send(&wire.ClientUsername{Name: name, Token: token})
			}
		case *wire.ServerSession:
			newToken = p.Token
		case *wire.ServerWorldData:
			return newToken, p, nil
		}
		if err != nil {
			return nil, nil, err
		}
	}
}

// play downloads the rest of the world after first, acknowledges it and
// says it is ready at the grant; it returns the granted tick.
func (c *rawConn) play(first *wire.ServerWorldData) (uint64, error) {
	payload := append([]byte(nil), first.Data...)
	for uint64(len(payload)) < first.Total {
		p, err := c.Next()
		if err != nil {
			return 0, err
		}
		switch p := p.(type) {
		case *wire.ServerDisconnect:
			return 0, &refused{p}
		case *wire.ServerWorldData:
			payload = append(payload, p.Data...)
		}
	}
	pl, err := snapshot.Parse(payload)
	if err != nil {
		return 0, err
	}
	if err := c.Send(&wire.ClientAck{Received: first.Total}); err != nil {
		return 0, err
	}
	return pl.Header.Granted, c.Send(&wire.ClientWorldReady{Tick: pl.Header.Granted})
}

// squatter joins and acknowledges the world a byte a second, again and
// again; each time the host must drop it as too slow (Timeout).
func (s *soak) squatter(ctx context.Context, addr string, i int) {
	for n := 0; ctx.Err() == nil; n++ {
		err := s.squatOnce(ctx, addr, fmt.Sprintf("Squat%d_%d", i, n))
		if ctx.Err() != nil {
			return
		}
		switch r, msg, ok := reasonOf(err); {
		case ok && r == wire.ReasonTimeout && strings.Contains(msg, "minimum"):
			s.hostile.squatDrops.Add(1)
		case ok && (r == wire.ReasonServerFull || r == wire.ReasonRateLimited):
			sleepCtx(ctx, time.Second) // no room now: try again
		default:
			s.hostile.odd("squatter: %v", err)
			sleepCtx(ctx, time.Second)
		}
	}
}

func (s *soak) squatOnce(ctx context.Context, addr, name string) error {
	c, err := dialFrom(ctx, squatFrom, addr)
	if err != nil {
		return err
	}
	defer c.Close()
	_, first, err := s.admit(c, name, nil)
	if err != nil {
		return err
	}
	go func() {
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for got := uint64(1); got < first.Total; got++ {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			if c.Send(&wire.ClientAck{Received: got}) != nil {
				return
			}
		}
	}()
	for {
		p, err := c.Next()
		if err != nil {
			return err
		}
		if d, ok := p.(*wire.ServerDisconnect); ok {
			return &refused{d}
		}
	}
}

// lagGriefer plays without ever advancing past its join; once dropped it
// rejoins with its token at once (the cool-down must refuse it), then
// after the cool-down.
func (s *soak) lagGriefer(ctx context.Context, addr string) {
	s.griefLoop(ctx, griefer{from: lagFrom, name: "LagGriefer", reason: wire.ReasonLagging,
		drops: &s.hostile.lagDrops, refused: &s.hostile.lagRefused, what: "lag griefer"}, addr)
}

// desyncLooper reports a wrong world hash and never finishes the repair;
// once dropped it rejoins with its token at once, then after the
// cool-down, and does it again.
func (s *soak) desyncLooper(ctx context.Context, addr string) {
	s.griefLoop(ctx, griefer{from: desyncFrom, name: looperName, desync: true, reason: wire.ReasonDesync,
		drops: &s.hostile.desyncDrops, refused: &s.hostile.desyncRefused, what: "desync looper"}, addr)
}

// griefer is one kind of griefing player: where it connects from, its
// name, whether it lies about hashes, the reason it is dropped with and
// the counters of its drops and refused rejoins.
type griefer struct {
	from, name, what string
	desync           bool
	reason           wire.Reason
	drops, refused   *atomic.Int64
}

// griefLoop joins as g until ctx ends, rejoining with its token after
// each drop: at once (the cool-down must refuse it), then after the
// cool-down. Anything but its own drop or refusal is recorded as odd.
func (s *soak) griefLoop(ctx context.Context, g griefer, addr string) {
	var token []byte
	for ctx.Err() == nil {
		tok, err := s.griefOnce(ctx, g.from, addr, g.name, token, g.desync)
		if ctx.Err() != nil {
			return
		}
		if tok != nil {
			token = tok
		}
		switch r, msg, ok := reasonOf(err); {
		case ok && r == g.reason && strings.Contains(msg, "may rejoin"):
			g.refused.Add(1)
			sleepCtx(ctx, soakDropCooldown)
		case ok && r == g.reason:
			g.drops.Add(1)
		default:
			s.hostile.odd("%s: %v", g.what, err)
			token = nil
			sleepCtx(ctx, time.Second)
		}
	}
}

// griefOnce joins as name (rejoining with token if set) and plays
// badly until the host ends the connection: the lag griefer acknowledges
// its join tick forever, the desync looper keeps up but reports a wrong
// hash once and never finishes the repair. It returns the newest token and the host's disconnect.
func (s *soak) griefOnce(ctx context.Context, from, addr, name string, token []byte, desync bool) ([]byte, error) {
	c, err := dialFrom(ctx, from, addr)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	tok, first, err := s.admit(c, name, token)
	if err != nil {
		return nil, err
	}
	granted, err := c.play(first)
	if err != nil {
		return tok, err
	}
	every := uint64(s.cfg.HashEvery)
	reported := granted / every * every
	lied := false
	for {
		p, err := c.Next()
		if err != nil {
			return tok, err
		}
		switch p := p.(type) {
		case *wire.ServerDisconnect:
			return tok, &refused{p}
		case *wire.ServerTick:
			if !desync {
				err = c.Send(&wire.ClientTickAck{Tick: granted}) // never further
				break
			}
			err = c.Send(&wire.ClientTickAck{Tick: p.Granted})
			if cp := p.Granted / every * every; cp > reported && !lied && err == nil {
				// One wrong report, then silence: the repair it starts
				// never finishes. (Reporting again would start another
				// repair each time; the soak's desync limit is out of
				// reach, as its own desyncs are on purpose.)
				reported, lied = cp, true
				err = c.Send(&wire.ClientHashes{Tick: cp, World: 0xBAD})
			}
		}
		if err != nil {
			return tok, err
		}
	}
}

// flood connects and hangs up at once, 200 times a second.
func (s *soak) flood(ctx context.Context, addr string) {
	t := time.NewTicker(5 * time.Millisecond)
	defer t.Stop()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(floodFrom)}, Timeout: time.Second}
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		nc, err := d.DialContext(ctx, "tcp", addr)
		if err != nil {
			continue
		}
		s.hostile.flood.Add(1)
		nc.Close()
	}
}

// looperName is the desync looper's player name.
const looperName = "DesyncLooper"

// observer counts the host's desync events for the desync looper.
type observer struct{ h *hostileCounts }

func (o observer) JoinFinished(host.JoinRecord) {}
func (o observer) Saved(host.SaveRecord)        {}
func (o observer) Desync(r host.DesyncRecord) {
	if r.Name != looperName {
		return
	}
	switch r.Event {
	case host.DesyncDetected:
		o.h.looperDetected.Add(1)
	case host.DesyncDropped:
		o.h.looperDropped.Add(1)
	}
}

// checkHostile checks what the hostile clients met: when the chaos ran
// long enough for each rule to act, that it did, and nothing else.
func (s *soak) checkHostile(res *Result, chaos time.Duration) {
	h := &s.hostile
	res.HostileSquatDrops, res.HostileLagDrops, res.HostileLagRefused = h.squatDrops.Load(), h.lagDrops.Load(), h.lagRefused.Load()
	res.HostileDesyncDrops, res.HostileDesyncRefused, res.HostileFlood = h.desyncDrops.Load(), h.desyncRefused.Load(), h.flood.Load()
	h.mu.Lock()
	odd := append([]string(nil), h.unexpected...)
	h.mu.Unlock()
	res.check("hostile clients met only the rules", len(odd) == 0, "%d other outcomes%s", len(odd), firsts(odd))
	if chaos >= hostileMinChaos {
		res.check("hostile clients dropped and cooled down",
			res.HostileSquatDrops > 0 && res.HostileLagDrops > 0 && res.HostileLagRefused > 0 && res.HostileDesyncDrops > 0 && res.HostileDesyncRefused > 0,
			"%d squatters dropped as too slow; lag griefer %d drops, %d rejoins refused; desync looper %d drops, %d rejoins refused",
			res.HostileSquatDrops, res.HostileLagDrops, res.HostileLagRefused, res.HostileDesyncDrops, res.HostileDesyncRefused)
	}
	o := s.srv.Overview()
	listed := 0
	for _, j := range o.Joins {
		if j.Name == "" {
			listed++
		}
	}
	res.check("connection flood kept off the joins list", listed == 0 && (res.HostileFlood == 0 || o.Unnamed > 0),
		"%d flood connections, %d unnamed attempts counted, %d listed", res.HostileFlood, o.Unnamed, listed)
}

// hostileMinChaos is the chaos time after which every hostile rule has
// had time to act (the repair timeout, 15 s, after the looper's first
// checkpoint, plus joins on a loaded machine).
const hostileMinChaos = 25 * time.Second
