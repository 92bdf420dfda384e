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
