package host

import (
	"errors"
	"net"
	"sync"
)

// multiListener accepts from several listeners as one, so one session
// serves them all through Serve's single accept path (the game's TCP port
// and a WebSocket listener, say). Each listener has a goroutine that
// hands its connections over; Close closes every listener and any
// connection accepted but not handed over.
type multiListener struct {
	lns      []net.Listener
	accepted chan accepted
	closed   chan struct{}
	once     sync.Once
	pumps    sync.WaitGroup
}

type accepted struct {
	nc  net.Conn
	err error
}

// mergeListeners returns lns as one listener whose Addr is the first's.
func mergeListeners(lns ...net.Listener) *multiListener {
	m := &multiListener{lns: lns, accepted: make(chan accepted), closed: make(chan struct{})}
	for _, ln := range lns {
		m.pumps.Add(1)
		go m.pump(ln)
	}
	return m
}

// pump hands ln's connections, and its errors, to Accept. A temporary
// error is handed over and accepting goes on (Serve waits before asking
// again, and the pump with it); any other error is handed over and ends
// the pump, as it ends Serve.
func (m *multiListener) pump(ln net.Listener) {
	defer m.pumps.Done()
	for {
		nc, err := ln.Accept()
		select {
		case m.accepted <- accepted{nc, err}:
		case <-m.closed:
			if nc != nil {
				nc.Close()
			}
			return
		}
		if err != nil && !temporary(err) {
			return
		}
	}
}

// Accept returns the next connection from any of the listeners.
func (m *multiListener) Accept() (net.Conn, error) {
	select {
	case a := <-m.accepted:
		return a.nc, a.err
	case <-m.closed:
		return nil, net.ErrClosed
	}
}

// Close closes every listener and waits for their pumps to stop.
func (m *multiListener) Close() error {
	var errs []error
	m.once.Do(func() {
		close(m.closed)
		for _, ln := range m.lns {
			if err := ln.Close(); err != nil && !errors.Is(err, net.ErrClosed) {
				errs = append(errs, err)
			}
		}
		m.pumps.Wait()
	})
	return errors.Join(errs...)
}

// Addr is the first listener's address.
func (m *multiListener) Addr() net.Addr { return m.lns[0].Addr() }
