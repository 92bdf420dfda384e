package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lockhost/lockhost/testing/rawconn"
	"github.com/lockhost/lockhost/wire"
)

// reader is one slow reader: a raw client that joins, takes every world
// chunk as it comes, and acknowledges a fixed number of bytes a second.
type reader struct {
	acked atomic.Uint64 // bytes acknowledged

	mu      sync.Mutex
	dropped string // the host's disconnect, if it sent one
}

func (r *reader) why() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.dropped
}

// run joins addr from the loopback address from and reads until ctx ends
// or the host closes the connection.
func (r *reader) run(ctx context.Context, from, addr, name string, dbs []wire.DefSummary, rate int) {
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}, Timeout: 5 * time.Second}
	nc, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		r.setDropped("dial: " + err.Error())
		return
	}
	defer nc.Close()
	go func() { <-ctx.Done(); nc.Close() }()
	c := &rawConn{rawconn.New(nc)}
	if err := c.Send(&wire.ClientProtocol{Protocol: wire.ProtocolVersion}); err != nil {
		return
	}
	var received atomic.Uint64
	acking := false
	for {
		p, err := c.Next()
		if err != nil {
			return
		}
		switch p := p.(type) {
		case *wire.ServerDisconnect:
			r.setDropped(fmt.Sprintf("%s: %s", p.Reason, p.Message))
			return
		case *wire.ServerModList:
			err = c.Send(&wire.ClientDefs{Databases: dbs})
		case *wire.ServerDefsOK:
			err = c.Send(&wire.ClientUsername{Name: name})
		case *wire.ServerWorldData:
			received.Store(p.Offset + uint64(len(p.Data)))
			if !acking {
				acking = true
				go r.ack(ctx, c, &received, p.Total, rate)
			}
		}
		if err != nil {
			return
		}
	}
}

// ack acknowledges what has been received, at most rate bytes a second.
func (r *reader) ack(ctx context.Context, c *rawConn, received *atomic.Uint64, total uint64, rate int) {
	const every = 100 * time.Millisecond
	t := time.NewTicker(every)
	defer t.Stop()
	var allowed, sent uint64
	for sent < total {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		allowed += uint64(rate) / uint64(time.Second/every)
		if n := min(allowed, received.Load()); n > sent {
			if c.Send(&wire.ClientAck{Received: n}) != nil {
				return
			}
			sent = n
			r.acked.Store(n)
		}
	}
}

func (r *reader) setDropped(why string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.dropped == "" {
		r.dropped = why
	}
}

// rawConn is a connection spoken a packet at a time.
type rawConn struct{ *rawconn.Conn }

// slowLink relays connections to a host, passing at most rate bytes a
// second from the host to the client (the client's packets pass at once).
type slowLink struct {
	ln     net.Listener
	target string
	rate   int
	wg     sync.WaitGroup
	mu     sync.Mutex
	conns  []net.Conn
}

func newSlowLink(target string, rate int) (*slowLink, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	l := &slowLink{ln: ln, target: target, rate: rate}
	l.wg.Add(1)
	go l.accept()
	return l, nil
}

// Addr is the address to join through.
func (l *slowLink) Addr() string { return l.ln.Addr().String() }

func (l *slowLink) accept() {
	defer l.wg.Done()
	for {
		client, err := l.ln.Accept()
		if err != nil {
			return
		}
		host, err := net.Dial("tcp", l.target)
		if err != nil {
			client.Close()
			continue
		}
		l.mu.Lock()
		l.conns = append(l.conns, client, host)
		l.mu.Unlock()
		l.wg.Add(2)
		go func() { defer l.wg.Done(); _, _ = io.Copy(host, client); closeWrite(host) }()
		go func() { defer l.wg.Done(); l.throttle(client, host); closeWrite(client) }()
	}
}

// throttle copies from src to dst, at most a tenth of the rate every
// tenth of a second.
func (l *slowLink) throttle(dst, src net.Conn) {
	const every = 100 * time.Millisecond
	buf := make([]byte, max(l.rate/10, 1))
	next := time.Now()
	for {
		n, err := src.Read(buf)
		if n > 0 {
			time.Sleep(time.Until(next))
			next = next.Add(every)
			if now := time.Now(); next.Before(now) {
				next = now
			}
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

func closeWrite(c net.Conn) {
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.CloseWrite()
	}
}

// Close stops the relay and closes its connections.
func (l *slowLink) Close() error {
	err := l.ln.Close()
	l.mu.Lock()
	for _, c := range l.conns {
		c.Close()
	}
	l.mu.Unlock()
	l.wg.Wait()
	return err
}
