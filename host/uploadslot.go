package host

import (
	"fmt"
	"net"

	"github.com/lockhost/lockhost/snapshot"
	"github.com/lockhost/lockhost/wire"
)

// awaitSlot puts the join in line for an upload slot and waits for its
// turn (at once when a slot is free), telling the joiner its place in line
// whenever it changes. The session does not drop the joiner as silent
// meanwhile; the download's deadlines start after.
func (p *peer) awaitSlot() (*upload, error) {
	u := p.srv.uplink
	up := u.enter(p.name)
	var err error
	_, _ = p.whileHostBusy(func() (*snapshot.Point, error) {
		err = p.waitSlot(up)
		return nil, nil
	})
	if err != nil {
		u.leave(up)
		return nil, err
	}
	return up, nil
}

// waitSlot waits for up's slot, sending a queued notice with the joiner's
// place each time it changes.
func (p *peer) waitSlot(up *upload) error {
	told := -1
	for {
		select {
		case <-up.ready:
			return nil
		default:
		}
		if ahead, waiting := p.srv.uplink.place(up); waiting && ahead != told {
			told = ahead
			p.conn.sendPacket(&wire.ServerNotice{Kind: wire.NoticeQueued, Text: queuedText(ahead, p.srv.uplink.slots), Place: uint32(ahead + 1)})
			p.log.Info("waiting for an upload slot", "ahead", ahead)
		}
		select {
		case <-up.ready:
			return nil
		case <-up.moved:
		case <-p.conn.closing:
			return net.ErrClosed
		case <-p.srv.sess.done:
			return net.ErrClosed
		}
	}
}

// queuedText is the notice of a joiner with ahead joins before it in line:
// it is number ahead+1.
func queuedText(ahead, slots int) string {
	joins := "joins"
	if slots == 1 {
		joins = "join"
	}
	return fmt.Sprintf("Waiting for an upload slot: the host sends the world to %d %s at a time, and you are number %d in line.",
		slots, joins, ahead+1)
}

// slotTurn is the uplink's word to a join whose download yielded its
// slot (uplink.review): the joiner is told it waits, why, and its place
// each time it moves up, and the download's deadlines stop until its
// turn comes back, when they start again. The uplink calls it under its
// lock, from any goroutine; it only counts, queues a notice and sets the
// read deadline (downloadDeadline), and reads what the download set
// before it started.
func (p *peer) slotTurn(t turn) {
	p.downloadDeadline(t.waiting, t.waited)
	switch {
	case t.yielded:
		p.srv.sess.stats.update(func(st *Stats) { st.SlotYields++ })
		p.log.Info("upload slot yielded", "rate", int64(t.rate), "share", int64(t.share), "ahead", t.ahead, "yields", t.yields)
		p.conn.sendPacket(&wire.ServerNotice{Kind: wire.NoticeQueued, Text: yieldedText(t.ahead, t.rate, t.share), Place: uint32(t.ahead + 1)})
	case t.waiting:
		p.conn.sendPacket(&wire.ServerNotice{Kind: wire.NoticeQueued, Text: pausedText(t.ahead), Place: uint32(t.ahead + 1)})
	default:
		p.log.Info("upload slot back", "waited_ms", ms(t.waited), "yields", t.yields)
	}
}

// yieldedText is the notice of a join whose download paused because it
// ran at rate bytes per second, under a quarter of its share, while
// others waited; ahead joins wait before it.
func yieldedText(ahead int, rate, share float64) string {
	return fmt.Sprintf("Your download is paused: it ran at %s/s, far below its share of the host's upload (%s/s), while others waited. "+
		"You are number %d in line; it goes on where it stopped when your turn comes.", byteSize(rate), byteSize(share), ahead+1)
}

// pausedText is the notice of a join whose download is paused after
// yielding its slot, when its place in line changes.
func pausedText(ahead int) string {
	return fmt.Sprintf("Your download is paused while others take their turn: you are number %d in line.", ahead+1)
}

// minDownloadRate is the slowest average download the join may take:
// Config.Join.MinDownloadRate, or less when the upload cap shared among
// the joins on their way leaves less for each (0: no minimum).
func (p *peer) minDownloadRate() float64 {
	r := p.srv.cfg.Join.MinDownloadRate
	if r <= 0 {
		return 0
	}
	if share := p.srv.uplink.share(); share > 0 {
		r = min(r, share/2)
	}
	return r
}
