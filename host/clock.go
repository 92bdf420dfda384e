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
// with its time and its estimate of the client's clock offset; the client
// echoes the nonce with its own time. A wrong echo ends the connection.
// A round is good when the one-way delay it implies, after correcting for
// the offset, is within ClockWindow; otherwise the offset is re-estimated
// from the round trip's midpoint and the host tries again, up to
// ClockRetries rounds. other, if set, handles the packets of the other
// allowed IDs that arrive meanwhile. It returns the last round trip.
func (p *peer) syncClock(other func(wire.Packet) error, allowed ...wire.ID) (time.Duration, error) {
	cfg := p.srv.cfg
	window := cfg.ClockWindow.Microseconds()
	var delta int64 // estimate of client clock minus host clock, in µs
	var rtt time.Duration
	for attempt := 0; attempt < cfg.ClockRetries; attempt++ {
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
		rtt = time.Duration(t1-t0) * time.Microsecond
		// The client's reply time on the host's clock, and so the delay
		// from the client's reply to its arrival here.
		oneWay := t1 - (cc.ClientTime - delta)
		if oneWay >= 0 && oneWay <= window {
			p.log.Debug("clock synced", "attempt", attempt, "rtt", rtt, "offset_us", delta)
			return rtt, nil
		}
		delta = cc.ClientTime - (t0+t1)/2
	}
	return 0, refuse(wire.ReasonClockSync, "Clock sync failed after %d attempts (last round trip %d ms, window %d ms).",
		cfg.ClockRetries, rtt.Milliseconds(), cfg.ClockWindow.Milliseconds())
}
