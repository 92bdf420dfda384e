package host

import (
	"errors"
	"sync/atomic"
	"time"

	"github.com/lockhost/lockhost/host/relay"
	"github.com/lockhost/lockhost/password"
	"github.com/lockhost/lockhost/snapshot"
	"github.com/lockhost/lockhost/wire"
)

// peerRelay is a reader's relay-mode state: the arbiter challenge it set,
// whether the client proved the secret, and the upload under way. Only
// the reader touches it, except world, which the session sets.
type peerRelay struct {
	challenge []byte
	arbiter   bool
	up        *relay.Upload
	first     bool                           // uploading a new session's world: no download deadlines yet
	world     atomic.Pointer[snapshot.Point] // the first world, once the session took it
	declared  *wire.ClientDefs               // Client_Defs kept unchecked while the session awaits its arbiter's declaration
}

// relayChallenge is the arbiter challenge for Server_ModList: fresh random
// bytes from a relay host with an arbiter secret, else none.
func (p *peer) relayChallenge() ([]byte, error) {
	if p.srv.sess.relay == nil || len(p.srv.cfg.Relay.ArbiterSecret) == 0 {
		return nil, nil
	}
	c, err := password.NewChallenge()
	p.relay.challenge = c
	return c, err
}

// checkArbiter checks an arbiter proof against the challenge sent, in
// constant time; a host that sent no challenge takes none. The caller
// has spent a guess on it (peer.guess): the proof is one more guess of
// the budget passwords are guessed against.
func (p *peer) checkArbiter(proof []byte) (claim, ok bool) {
	if len(proof) == 0 {
		return false, false
	}
	ok = len(p.relay.challenge) > 0 && password.VerifyArbiter(p.srv.cfg.Relay.ArbiterSecret, p.relay.challenge, proof)
	if len(p.relay.challenge) > 0 {
		p.srv.guesses.ArbiterChecked(ok)
	}
	if !ok {
		p.log.Warn("arbiter proof refused", "name", p.name)
	}
	p.relay.arbiter = ok
	return true, ok
}

// upload takes one Client_Upload chunk (docs/protocol.md, sections 4 id
// 13 and 14.4), in any phase after admission. A client that is not the
// arbiter is refused and logged; a chunk that breaks the packet's rules
// ends the connection; an upload whose content breaks a rule is refused
// with Server_UploadResult and the connection stays.
func (p *peer) upload(body []byte) error {
	pkt, err := wire.Decode(wire.IDClientUpload, body)
	if err != nil {
		return refuse(wire.ReasonBadPacket, "%s", err)
	}
	cu := pkt.(*wire.ClientUpload)
	rs := p.srv.sess.relay
	if rs == nil || !p.relay.arbiter {
		p.log.Warn("upload refused: not the arbiter", "request", cu.Request, "bytes", len(cu.Data))
		return refuse(wire.ReasonBadPacket, "Only the session's arbiter may upload.")
	}
	if cur := p.relay.up; cur != nil && cur.Request().Request != cu.Request {
		if drop, err := p.switchUpload(cur, cu.Request); drop || err != nil {
			return err
		}
	}
	if p.relay.up == nil {
		r, dropped := rs.lookup(cu.Request, p.id)
		switch {
		case dropped:
			return nil // answered or cancelled: a late chunk
		case r == nil:
			return refuse(wire.ReasonBadPacket, "an upload for request %d, which the host did not send", cu.Request)
		case cu.Offset != 0:
			return refuse(wire.ReasonBadPacket, "upload %d begins at offset %d", cu.Request, cu.Offset)
		}
		p.relay.up = relay.NewUpload(r.pkt).LimitRaw(p.srv.cfg.Relay.WorldRawLimit)
		p.log.Info("upload begins", "request", cu.Request, "kind", r.pkt.Kind.String(), "tick", r.pkt.Tick, "bytes", cu.Total)
	} else if _, dropped := rs.lookup(cu.Request, p.id); dropped {
		// Cancelled while under way: what came is let go, and the rest
		// is dropped as it comes.
		p.log.Info("upload dropped: its request was cancelled", "request", cu.Request, "received", p.relay.up.Received())
		p.relay.up = nil
		return nil
	}
	if p.relay.first {
		// The first world's arbiter is in no deadline of a download:
		// each chunk gives it another stall period.
		_ = p.nc.SetReadDeadline(time.Now().Add(p.srv.cfg.Timeouts.DownloadStall))
	}
	up := p.relay.up
	done, err := up.Add(cu)
	switch {
	case errors.Is(err, relay.ErrChunk):
		return refuse(wire.ReasonBadPacket, "%s", err)
	case err != nil:
		p.relay.up = nil
		p.uploadRefused(cu.Request, err)
		return nil
	case done:
		p.relay.up = nil
		return p.uploadDone(up)
	}
	return nil
}

// switchUpload handles a chunk of upload q while upload cur is under
// way (docs/protocol.md, section 14.4). An arbiter may abandon an upload
// whose request was cancelled and begin the next: cur is then dropped.
// A late chunk of a request answered or cancelled is dropped by the
// caller (drop). Any other interleaving ends the connection.
func (p *peer) switchUpload(cur *relay.Upload, q uint32) (drop bool, err error) {
	rs, c := p.srv.sess.relay, cur.Request().Request
	if _, dropped := rs.lookup(c, p.id); dropped {
		p.log.Info("upload abandoned: its request was cancelled", "request", c, "received", cur.Received(), "next", q)
		p.relay.up = nil
		return false, nil
	}
	if _, dropped := rs.lookup(q, p.id); dropped {
		return true, nil // a late chunk; cur goes on
	}
	return false, refuse(wire.ReasonBadPacket, "a chunk of upload %d inside upload %d", q, c)
}

// uploadRefused answers request q with a refusal and logs it; the host
// may ask again.
func (p *peer) uploadRefused(q uint32, err error) {
	rs := p.srv.sess.relay
	r, open := rs.close(q)
	p.log.Warn("upload refused", "request", q, "err", err)
	p.conn.sendPacket(&wire.ServerUploadResult{Request: q, Result: wire.UploadRefused, Message: truncate(err.Error(), wire.MaxTextBytes)})
	if !open {
		return
	}
	// Ask again: a join point's joiners are waiting for it, and a new
	// session for its world.
	sess := p.srv.sess
	sess.call(func() {
		again := rs.request(r.pkt.Kind, r.pkt.Tick, r.pkt.Applied, r.cut)
		again.pkt.Maps, again.repaired = r.pkt.Maps, r.repaired
		rs.send(again)
	})
}

// uploadDone uses a complete upload: the joiners waiting for a join
// point get it; the first world goes to the session, which starts its
// clock at its tick.
func (p *peer) uploadDone(up *relay.Upload) error {
	rs, sess := p.srv.sess.relay, p.srv.sess
	req, pt := up.Request(), up.Point()
	q := req.Request
	accept := func() {
		p.conn.sendPacket(&wire.ServerUploadResult{Request: q, Result: wire.UploadAccepted})
	}
	switch req.Kind {
	case wire.UploadJoinPoint:
		r, open := rs.close(q)
		if open && r.repaired != nil { // a repair of the whole world
			accept()
			r.repaired(pt)
			return nil
		}
		if !open || r.cut == nil || !r.cut.Deliver(pt) {
			p.conn.sendPacket(&wire.ServerUploadResult{Request: q, Result: wire.UploadCancelled})
			return nil
		}
		rs.world.Seen(pt)
		accept()
		p.log.Info("join point uploaded", "request", q, "tick", pt.Tick, "bytes", pt.CompressedSize(),
			"ms", ms(time.Since(r.sent)))
	case wire.UploadWorld:
		peerConn := p.conn
		world := &p.relay.world
		sess.call(func() {
			if _, open := rs.close(q); !open {
				return
			}
			if err := sess.relayStart(pt, "arbiter"); err != nil {
				p.log.Warn("world upload not taken", "err", err)
				peerConn.sendPacket(&wire.ServerUploadResult{Request: q, Result: wire.UploadRefused, Message: err.Error()})
				return
			}
			world.Store(pt)
			peerConn.sendPacket(&wire.ServerUploadResult{Request: q, Result: wire.UploadAccepted})
		})
	case wire.UploadMaps:
		r, open := rs.close(q)
		if !open || r.repaired == nil {
			p.conn.sendPacket(&wire.ServerUploadResult{Request: q, Result: wire.UploadCancelled})
			return nil
		}
		accept()
		r.repaired(pt)
	}
	return nil
}

// uploadWorld is the transfer of the first arbiter of a new relay
// session: it uploads the world (the reader takes the chunks as any
// phase's packets) and then says WorldReady at the world's tick, without
// downloading anything. It returns the payload a joiner would have been
// sent, for the join's record.
func (p *peer) uploadWorld(jr joinReply) (*snapshot.Payload, error) {
	p.relay.first = true
	defer func() { p.relay.first = false }()
	_ = p.nc.SetReadDeadline(time.Now().Add(p.srv.cfg.Timeouts.DownloadStall))
	pkt, err := p.read(wire.IDClientWorldReady)
	if err != nil {
		return nil, err
	}
	wr := pkt.(*wire.ClientWorldReady)
	pt := p.relay.world.Load()
	if pt == nil {
		return nil, refuse(wire.ReasonBadPacket, "WorldReady before the world was uploaded")
	}
	if wr.Tick != pt.Tick {
		return nil, refuse(wire.ReasonBadPacket, "WorldReady at tick %d, the upload's is %d", wr.Tick, pt.Tick)
	}
	p.phase("upload")
	if err := p.worldReady(wr); err != nil {
		return nil, err
	}
	return snapshot.NewPayload(pt, jr.faction, pt.Tick, nil)
}

// whileHostBusy runs fn, on the reader, counting the member as heard
// from meanwhile: a joiner the host keeps waiting for its world (the
// arbiter's upload, a build, a re-encoding for its codec) echoes the
// keepalives all along, but its reader reads nothing until fn returns.
// Liveness drops a client that is silent, not one the host is not
// listening to; fn's own bounds (the upload wait, the world limit)
// bound the wait.
func (p *peer) whileHostBusy(fn func() (*snapshot.Point, error)) (*snapshot.Point, error) {
	m := p.member
	if m == nil {
		return fn()
	}
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		tick := time.NewTicker(p.srv.cfg.Timeouts.KeepaliveEvery)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case now := <-tick.C:
				m.heard.Store(now.UnixNano())
			}
		}
	}()
	defer func() { close(done); <-stopped }()
	return fn()
}

// relayWaitRefusal turns a join point's failed wait for the arbiter into
// the joiner's refusal; nil for any other error.
func relayWaitRefusal(err error) error {
	switch {
	case errors.Is(err, relay.ErrWaitedTooLong):
		return refuse(wire.ReasonTimeout, "The session's arbiter did not upload the world in time.")
	case errors.Is(err, relay.ErrArbiterLeft):
		// Timeout, like a wait the arbiter let run out: a client joins
		// again by itself, and gets a point from the next arbiter.
		return refuse(wire.ReasonTimeout, "The session's arbiter left before it uploaded your join point; join again.")
	}
	return nil
}

// truncate cuts s to at most n bytes.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}
