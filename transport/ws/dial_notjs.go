//go:build !js

package ws

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/coder/websocket"
)

func dialOptions() *websocket.DialOptions {
	return &websocket.DialOptions{Subprotocols: []string{Subprotocol}, CompressionMode: websocket.CompressionDisabled, HTTPClient: handshakeClient}
}

// handshakeClient sends the upgrade request; an answer other than the
// upgrade comes back as a *StatusError (through the library's errors).
var handshakeClient = &http.Client{Transport: statusTransport{http.DefaultTransport}}

// Busy waits: without a Retry-After (or with 0), DefaultBusyWait; a host
// asking for longer than MaxBusyWait is not waited for.
const (
	DefaultBusyWait = time.Second
	MaxBusyWait     = 30 * time.Second
)

// maxRetryAfter bounds the Retry-After seconds a StatusError keeps (a
// day), so that no value overflows a Duration.
const maxRetryAfter = 24 * 60 * 60

// StatusError is a host, or whatever serves the URL, answering the
// WebSocket upgrade with an HTTP status instead: 503 when the host is
// busy (its backlog, or this address's share of it, is full; Busy) or
// closing, 404 when nothing serves the path.
type StatusError struct {
	// Code is the HTTP status.
	Code int
	// RetryAfter is the wait the answer's Retry-After header asked for
	// (in seconds; zero when it had none or one that is not a number).
	RetryAfter time.Duration
}

func (e *StatusError) Error() string {
	if e.Busy() {
		return fmt.Sprintf("the host is busy (HTTP %d), try again in %v", e.Code, max(e.RetryAfter, DefaultBusyWait))
	}
	return fmt.Sprintf("the server answered HTTP %d %s, not a WebSocket upgrade: check the URL (the host's --http address and %s)",
		e.Code, http.StatusText(e.Code), Path)
}

// Busy reports a 503: the host may take the connection if asked again.
func (e *StatusError) Busy() bool { return e.Code == http.StatusServiceUnavailable }

// statusTransport turns an HTTP answer to the upgrade that is not the
// upgrade (101) into a *StatusError.
type statusTransport struct{ next http.RoundTripper }

func (t statusTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(req)
	if err != nil || resp.StatusCode == http.StatusSwitchingProtocols {
		return resp, err
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4<<10))
	resp.Body.Close()
	e := &StatusError{Code: resp.StatusCode}
	if s, err := strconv.ParseUint(resp.Header.Get("Retry-After"), 10, 32); err == nil {
		e.RetryAfter = time.Duration(min(s, maxRetryAfter)) * time.Second
	}
	return nil, e
}

// DialRetry is Dial that, while the host answers busy (a *StatusError
// whose Busy is true), waits what its Retry-After asks (DefaultBusyWait
// without one, and up to a quarter more at random, so that clients
// turned away together do not come back together) and dials again. It
// gives up, returning the last error, when the wait is over MaxBusyWait
// or would outlast ctx.
func DialRetry(ctx context.Context, url string) (net.Conn, error) {
	for {
		nc, err := Dial(ctx, url)
		wait, busy := busyWait(err)
		if !busy {
			return nc, err
		}
		wait += rand.N(wait/4 + 1)
		if deadline, ok := ctx.Deadline(); wait > MaxBusyWait || ok && time.Now().Add(wait).After(deadline) {
			return nil, err
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, err
		case <-t.C:
		}
	}
}

// busyWait is how long a busy host asked to wait before the next try,
// and whether err is a busy host's.
func busyWait(err error) (time.Duration, bool) {
	var se *StatusError
	if !errors.As(err, &se) || !se.Busy() {
		return 0, false
	}
	if se.RetryAfter <= 0 {
		return DefaultBusyWait, true
	}
	return se.RetryAfter, true
}
