//go:build js && wasm

package main

import (
	"errors"
	"io"
	"net"
	"os"
	"sync"
	"syscall/js"
	"time"
)

// dcMessage is the largest message the page sends on the data channel:
// the Go sides' (transport/ice.MessageSize), which every browser takes.
const dcMessage = 16 << 10

// dcHigh is how much the page lets the browser buffer for sending
// before a Write waits for it to drain to dcLow.
const (
	dcHigh = 1 << 20
	dcLow  = 256 << 10
)

// dcLinger bounds how long a closed channel's peer connection stays
// open for the channel's closing (what was written still going out).
const dcLinger = 5 * time.Second

// dcConn is a WebRTC data channel as the join library's net.Conn: the
// channel's messages in order are the byte stream (section 2), as over
// the WebSocket. One reader and one writer, as the join library uses it.
type dcConn struct {
	pc, dc js.Value
	path   string
	funcs  []listener
	once   sync.Once // Close's teardown
	// chClosed is closed when the channel's close event comes.
	chClosed  chan struct{}
	closeOnce sync.Once

	mu       sync.Mutex
	buf      []byte
	closed   bool  // the channel closed (by either side)
	err      error // why, for Read and Write once the buffer is drained
	rdl      time.Time
	wdl      time.Time
	readable chan struct{} // cap 1: data, a close or a new deadline
	drained  chan struct{} // cap 1: bufferedamountlow, a close or a new deadline
}

// newDCConn takes over the open channel dc of pc.
func newDCConn(pc, dc js.Value, path string) *dcConn {
	c := &dcConn{pc: pc, dc: dc, path: path, readable: make(chan struct{}, 1), drained: make(chan struct{}, 1),
		chClosed: make(chan struct{})}
	dc.Set("bufferedAmountLowThreshold", dcLow)
	c.on("message", func(ev js.Value) {
		data := js.Global().Get("Uint8Array").New(ev.Get("data"))
		b := make([]byte, data.Length())
		js.CopyBytesToGo(b, data)
		c.mu.Lock()
		c.buf = append(c.buf, b...)
		c.mu.Unlock()
		poke(c.readable)
	})
	c.on("bufferedamountlow", func(js.Value) { poke(c.drained) })
	c.on("close", func(js.Value) {
		c.shut(io.EOF)
		c.closeOnce.Do(func() { close(c.chClosed) })
	})
	return c
}

// on handles the channel's event name with f, released on Close.
func (c *dcConn) on(name string, f func(ev js.Value)) {
	fn := js.FuncOf(func(_ js.Value, a []js.Value) any { f(arg(a, 0)); return nil })
	c.funcs = append(c.funcs, listener{name, fn})
	c.dc.Call("addEventListener", name, fn)
}

// listener is an event listener added to the channel.
type listener struct {
	name string
	fn   js.Func
}

// poke wakes a waiter on ch without blocking.
func poke(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// shut marks the connection closed with err (the first reason stays).
func (c *dcConn) shut(err error) {
	c.mu.Lock()
	if !c.closed {
		c.closed, c.err = true, err
	}
	c.mu.Unlock()
	poke(c.readable)
	poke(c.drained)
}

// wait waits for ch until deadline dl (zero: none).
func wait(ch chan struct{}, dl time.Time) error {
	if dl.IsZero() {
		<-ch
		return nil
	}
	d := time.Until(dl)
	if d <= 0 {
		return os.ErrDeadlineExceeded
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ch:
		return nil
	case <-t.C:
		return os.ErrDeadlineExceeded
	}
}

func (c *dcConn) Read(p []byte) (int, error) {
	for {
		c.mu.Lock()
		if len(c.buf) > 0 {
			n := copy(p, c.buf)
			c.buf = c.buf[n:]
			if len(c.buf) == 0 {
				c.buf = nil
			}
			c.mu.Unlock()
			return n, nil
		}
		if c.closed {
			err := c.err
			c.mu.Unlock()
			return 0, err
		}
		dl := c.rdl
		c.mu.Unlock()
		if err := wait(c.readable, dl); err != nil {
			return 0, err
		}
	}
}

func (c *dcConn) Write(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		c.mu.Lock()
		closed, err, dl := c.closed, c.err, c.wdl
		c.mu.Unlock()
		if closed {
			if err == io.EOF {
				err = net.ErrClosed
			}
			return n, err
		}
		if c.dc.Get("bufferedAmount").Int() > dcHigh {
			if err := wait(c.drained, dl); err != nil {
				return n, err
			}
			continue
		}
		m := min(len(p)-n, dcMessage)
		a := js.Global().Get("Uint8Array").New(m)
		js.CopyBytesToJS(a, p[n:n+m])
		if err := send(c.dc, a); err != nil {
			c.shut(err)
			return n, err
		}
		n += m
	}
	return n, nil
}

// send sends one message, turning the browser's exception into an error.
func send(dc, a js.Value) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = errors.New("the data channel refused a message")
		}
	}()
	dc.Call("send", a)
	return nil
}

// Close closes the channel, and its peer connection once the channel's
// closing is done (at most dcLinger): the browser sends what was
// written before it closes a channel (a Client_Leave), not once its
// peer connection is closed. It does not wait for either: a page going
// away has no time to.
func (c *dcConn) Close() error {
	c.shut(net.ErrClosed)
	c.once.Do(func() {
		c.dc.Call("close")
		go func() {
			t := time.NewTimer(dcLinger)
			defer t.Stop()
			select {
			case <-c.chClosed:
			case <-t.C:
			}
			c.pc.Call("close")
			for _, l := range c.funcs {
				c.dc.Call("removeEventListener", l.name, l.fn)
				l.fn.Release()
			}
		}()
	})
	return nil
}

// dcAddr is an end of a data channel, named by the path it took.
type dcAddr string

func (a dcAddr) Network() string { return "webrtc" }
func (a dcAddr) String() string  { return string(a) }

func (c *dcConn) LocalAddr() net.Addr  { return dcAddr("browser") }
func (c *dcConn) RemoteAddr() net.Addr { return dcAddr("host (" + c.path + ")") }

func (c *dcConn) SetDeadline(t time.Time) error {
	c.SetReadDeadline(t)
	return c.SetWriteDeadline(t)
}

func (c *dcConn) SetReadDeadline(t time.Time) error {
	c.mu.Lock()
	c.rdl = t
	c.mu.Unlock()
	poke(c.readable)
	return nil
}

func (c *dcConn) SetWriteDeadline(t time.Time) error {
	c.mu.Lock()
	c.wdl = t
	c.mu.Unlock()
	poke(c.drained)
	return nil
}
