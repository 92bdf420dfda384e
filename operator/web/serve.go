package web

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// TokenEnv is the environment variable host serve reads the status token
// from (Config.Token) when no token file is given.
const TokenEnv = "LOCKHOST_HTTP_TOKEN"

// ListenAddr turns the --http flag's value into the address to listen on.
// A port alone ("8080" or ":8080") binds loopback only, 127.0.0.1, as the
// routes are open unless a token is set (Config.Token). Another machine
// can reach them only when the user names the host explicitly
// ("0.0.0.0:8080", "[::]:8080", "192.168.1.5:8080").
func ListenAddr(flag string) (string, error) {
	s := strings.TrimSpace(flag)
	if s == "" {
		return "", errors.New("status address: empty; give PORT, :PORT or HOST:PORT")
	}
	if !strings.Contains(s, ":") {
		if strings.Trim(s, "0123456789") != "" {
			return "", fmt.Errorf("status address %q: no port; want PORT, :PORT or HOST:PORT", flag)
		}
		s = ":" + s // a port alone
	}
	h, port, err := net.SplitHostPort(s)
	if err != nil {
		return "", fmt.Errorf("status address %q: want PORT, :PORT or HOST:PORT: %w", flag, err)
	}
	n, err := strconv.ParseUint(port, 10, 16)
	if err != nil {
		return "", fmt.Errorf("status address %q: port %q is not a number from 0 to 65535", flag, port)
	}
	port = strconv.FormatUint(n, 10)
	if h == "" {
		h = "127.0.0.1"
	}
	return net.JoinHostPort(h, port), nil
}

// IsLoopback reports whether addr (HOST:PORT) is reachable from this
// machine only: a loopback IP address or "localhost".
func IsLoopback(addr string) bool {
	h, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if strings.EqualFold(h, "localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// Listen applies ListenAddr to the --http flag's value and listens on the
// result, so a busy or invalid address fails before the host starts.
func Listen(flag string) (net.Listener, error) {
	addr, err := ListenAddr(flag)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("status page: listen: %w", err)
	}
	return ln, nil
}

// Server timeouts. A stream from /events lives on; it pushes its own
// write deadline forward with each event.
const (
	readHeaderTimeout = 5 * time.Second
	writeTimeout      = 30 * time.Second
	idleTimeout       = 60 * time.Second
	shutdownTimeout   = 5 * time.Second
)

// Serve serves h on ln until ctx ends, then shuts down gracefully: it
// stops accepting, ends the open /events streams, lets the other requests
// finish (for up to 5 s) and closes ln. It returns nil after a shutdown
// through ctx, or why serving failed. A nil logger logs to slog.Default().
func Serve(ctx context.Context, ln net.Listener, h http.Handler, logger *slog.Logger) error {
	if logger == nil {
		logger = slog.Default()
	}
	// Requests get a context that ends at shutdown rather than with ctx,
	// so requests under way finish while streams, which never would, end.
	base, endRequests := context.WithCancel(context.WithoutCancel(ctx))
	defer endRequests()
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: readHeaderTimeout,
		WriteTimeout:      writeTimeout,
		IdleTimeout:       idleTimeout,
		MaxHeaderBytes:    16 << 10,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
		BaseContext:       func(net.Listener) context.Context { return base },
	}
	srv.RegisterOnShutdown(endRequests)
	// A connection that never sent a request (a browser opens some ahead
	// of need) counts as busy to Shutdown for its first 5 s: close those
	// at shutdown, or the shutdown waits them out.
	fresh := trackNew(srv)
	srv.RegisterOnShutdown(fresh.closeAll)
	addr := ln.Addr().String()
	logger.Info("status page", "url", "http://"+addr+"/")
	switch {
	case IsLoopback(addr):
	case protected(h):
		logger.Info("status page and metrics are reachable from other machines; they ask for the status token", "addr", addr)
	default:
		logger.Warn("status page and metrics are reachable from other machines, with no token; set "+TokenEnv+" to require one", "addr", addr)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	select {
	case err := <-served:
		return fmt.Errorf("status page: %w", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	err := srv.Shutdown(sctx)
	if err != nil {
		srv.Close()
		err = fmt.Errorf("status page shutdown: %w", err)
	}
	if serr := <-served; serr != nil && !errors.Is(serr, http.ErrServerClosed) && err == nil {
		err = fmt.Errorf("status page: %w", serr)
	}
	return err
}

// newConns are a server's connections that have not sent a request yet.
type newConns struct {
	mu    sync.Mutex
	conns map[net.Conn]struct{}
}

// trackNew follows srv's connections through their states (it sets
// srv.ConnState).
func trackNew(srv *http.Server) *newConns {
	n := &newConns{conns: map[net.Conn]struct{}{}}
	srv.ConnState = func(c net.Conn, st http.ConnState) {
		n.mu.Lock()
		defer n.mu.Unlock()
		if st == http.StateNew {
			n.conns[c] = struct{}{}
		} else {
			delete(n.conns, c)
		}
	}
	return n
}

// closeAll closes every connection that has not sent a request.
func (n *newConns) closeAll() {
	n.mu.Lock()
	defer n.mu.Unlock()
	for c := range n.conns {
		_ = c.Close()
		delete(n.conns, c)
	}
}
