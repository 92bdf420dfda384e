package status

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"slices"
	"time"
)

// Ping sends one request with a random 32-bit ping ID to addr ("host:port",
// UDP) and waits for the reply with that ID, at most timeout (if > 0) and
// until ctx is done. It returns the reply's Info and the round-trip time
// from sending the request to receiving the reply.
//
// It sends three requests at once, a PathsVersion one, a ReachVersion one
// and then a version 1 one (each with its own ID), and takes the first
// reply to any: a host that speaks version 3 answers the first first, with
// Info.Reach and Info.Paths; an older host drops what it does not speak
// and answers the next it does.
//
// Ping reads from a connected socket, so it only sees datagrams from addr;
// it skips datagrams that are malformed or carry another ping ID. If
// nothing listens at addr the error is usually "connection refused" (from
// ICMP), otherwise a timeout.
func Ping(ctx context.Context, addr string, timeout time.Duration) (Info, time.Duration, error) {
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	var d net.Dialer
	conn, err := d.DialContext(ctx, "udp", addr)
	if err != nil {
		return Info{}, 0, fmt.Errorf("status: ping %s: %w", addr, err)
	}
	defer conn.Close()
	if dl, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(dl)
	}
	stop := context.AfterFunc(ctx, func() { _ = conn.SetDeadline(time.Unix(1, 0)) })
	defer stop()

	ids := pingIDs() // the version 3, 2 and 1 requests'
	sent := time.Now()
	for i, v := range []byte{PathsVersion, ReachVersion, Version} {
		if _, err := conn.Write(AppendRequestVersion(nil, ids[i], v)); err != nil {
			return Info{}, 0, fmt.Errorf("status: ping %s: %w", addr, err)
		}
	}
	// Room for one byte more than the largest reply, so a longer datagram
	// is seen as too long rather than truncated into a valid one.
	buf := make([]byte, MaxPathsReplySize+1)
	var skipped error
	for {
		n, err := conn.Read(buf)
		if err != nil {
			var ne net.Error
			if cerr := ctx.Err(); cerr != nil {
				err = cerr
			} else if errors.As(err, &ne) && ne.Timeout() {
				// The socket's deadline is ctx's; its timer may fire first.
				err = context.DeadlineExceeded
			}
			if skipped != nil {
				err = fmt.Errorf("%w (last skipped reply: %w)", err, skipped)
			}
			return Info{}, 0, fmt.Errorf("status: ping %s: %w", addr, err)
		}
		rtt := time.Since(sent)
		got, info, err := DecodeReply(buf[:n])
		if err != nil {
			skipped = err
			continue
		}
		if !slices.Contains(ids[:], got) {
			skipped = errors.New("status: reply to another ping ID")
			continue
		}
		return info, rtt, nil
	}
}

// pingIDs draws three distinct random ping IDs.
func pingIDs() [3]uint32 {
	var ids [3]uint32
	for i := range ids {
		for ids[i] = rand.Uint32(); slices.Contains(ids[:i], ids[i]); {
			ids[i] = rand.Uint32()
		}
	}
	return ids
}
