package host

import (
	"crypto/rand"
	"encoding/binary"
	"net"
	"time"

	"github.com/lockhost/lockhost/wire"
)

// nowMicros is the host clock as the clock-sync handshake sends it.
func nowMicros() int64 { return time.Now().UnixMicro() }

// syncClock runs the clock-sync handshake: the host sends a random nonce
// with its time and its estimate of the client's clock offset (delta); the
// client echoes the nonce with its own time. A wrong echo ends the
// connection. A round is good when the client's time, corrected by delta,
// falls within ClockWindow of the round trip's midpoint, that is when the
// estimate holds; otherwise delta is re-estimated from this round's
// midpoint and the host tries again, up to ClockRetries rounds. The window
// bounds the disagreement (jitter, asymmetry, a drifting clock), not the
// latency: a steady 100 ms link passes on its first or second round. other,
// if set, handles the packets of the other allowed IDs that arrive
// meanwhile. It returns the last round trip.
func (p *peer) syncClock(other func(wire.Packet) error, allowed ...wire.ID) (time.Duration, error) {
	cfg := p.srv.cfg
	window := cfg.Admission.ClockWindow.Microseconds()
	var delta int64 // estimate of client clock minus host clock, in µs
	var rtt time.Duration
	for attempt := 0; attempt < cfg.Admission.ClockRetries; attempt++ {
		var nb [4]byte
		if _, err := rand.Read(nb[:]); err != nil {
			return 0, err
		}
		nonce := binary.LittleEndian.Uint32(nb[:])
		t0 := nowMicros()
		if !p.conn.sendPacket(&wire.ServerClock{Nonce: nonce, HostTime: t0, Delta: delta, Attempt: uint8(attempt)}) {
			return 0, net.ErrClosed
		}
		var cc *wire.ClientClock
		for cc == nil {
			pkt, err := p.read(append(allowed, wire.IDClientClock)...)
			if err != nil {
				return 0, err
			}
			if c, ok := pkt.(*wire.ClientClock); ok {
				cc = c
			} else if err := other(pkt); err != nil {
				return 0, err
			}
		}
		t1 := nowMicros()
		if cc.Nonce != nonce {
			return 0, refuse(wire.ReasonClockSync, "Clock sync failed: the client echoed a wrong nonce.")
		}
		p.pend.Progress(time.Now()) // a round answered is progress (package gate)
		rtt = time.Duration(t1-t0) * time.Microsecond
		mid := t0 + (t1-t0)/2
		// The client's clock read on the host's clock, against the moment
		// a symmetric link would have it answer.
		if off := (cc.ClientTime - delta) - mid; off >= -window && off <= window {
			p.log.Debug("clock synced", "attempt", attempt, "rtt", rtt, "offset_us", delta)
			return rtt, nil
		}
		delta = cc.ClientTime - mid
	}
	return 0, refuse(wire.ReasonClockSync, "Clock sync failed after %d attempts (last round trip %d ms, allowed disagreement %d ms).",
		cfg.Admission.ClockRetries, rtt.Milliseconds(), cfg.Admission.ClockWindow.Milliseconds())
}
