package rcon

import (
	"bufio"
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/lockhost/lockhost/internal/addrkey"
	"github.com/lockhost/lockhost/internal/ratelimit"
)

// PasswordEnv names the environment variable the host reads the RCON
// password from when no password file is given.
const PasswordEnv = "LOCKHOST_RCON_PASSWORD"

// mirrorMarker is the body of the packet the Source dedicated server sends
// after mirroring an empty SERVERDATA_RESPONSE_VALUE.
var mirrorMarker = []byte{0x00, 0x01, 0x00, 0x00}

// Config configures a Server.
type Config struct {
	// Password is what SERVERDATA_AUTH must carry; it must not be empty.
	Password []byte
	// Exec runs one command line for by ("rcon ADDR") and returns its
	// output.
	Exec func(by, line string) string
	// Logger gets a line per authentication and per command (default:
	// slog.Default()).
	Logger *slog.Logger
	// AuthRate and AuthBurst limit failed authentication attempts per
	// address, an IPv6 address by its /64 (defaults 0.2/s and 5): past
	// them every attempt is refused without checking the password.
	AuthRate  float64
	AuthBurst int
	// AuthTimeout bounds connect to authentication (default 10 s);
	// IdleTimeout the wait for a command after it (default 15 min).
	AuthTimeout, IdleTimeout time.Duration
	// WriteTimeout bounds one response (default 10 s).
	WriteTimeout time.Duration
	// MaxConns caps the connections open at once (default 16); one more
	// is closed at once.
	MaxConns int
}

// Server serves RCON connections.
type Server struct {
	cfg     Config
	limiter *ratelimit.Table[string]
	slots   chan struct{}
}

// NewServer returns a server for cfg, its zero fields set to the defaults.
func NewServer(cfg Config) (*Server, error) {
	if len(cfg.Password) == 0 {
		return nil, errors.New("rcon: no password")
	}
	if cfg.Exec == nil {
		return nil, errors.New("rcon: no command runner")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.AuthRate <= 0 {
		cfg.AuthRate = 0.2
	}
	if cfg.AuthBurst <= 0 {
		cfg.AuthBurst = 5
	}
	for _, d := range []struct {
		v   *time.Duration
		def time.Duration
	}{{&cfg.AuthTimeout, 10 * time.Second}, {&cfg.IdleTimeout, 15 * time.Minute}, {&cfg.WriteTimeout, 10 * time.Second}} {
		if *d.v <= 0 {
			*d.v = d.def
		}
	}
	if cfg.MaxConns <= 0 {
		cfg.MaxConns = 16
	}
	return &Server{cfg: cfg, limiter: ratelimit.NewTable[string](cfg.AuthRate, cfg.AuthBurst, 1<<16),
		slots: make(chan struct{}, cfg.MaxConns)}, nil
}

// ListenAddr turns the --rcon flag's value into the address to listen
// on: a port alone ("27015" or ":27015") binds loopback only, 127.0.0.1;
// another machine can reach it only when the host is named
// ("0.0.0.0:27015").
func ListenAddr(flag string) (string, error) {
	s := strings.TrimSpace(flag)
	if !strings.Contains(s, ":") {
		s = ":" + s
	}
	h, port, err := net.SplitHostPort(s)
	if err != nil {
		return "", fmt.Errorf("RCON address %q: want PORT, :PORT or HOST:PORT: %w", flag, err)
	}
	n, err := strconv.ParseUint(port, 10, 16)
	if err != nil {
		return "", fmt.Errorf("RCON address %q: port %q is not a number from 0 to 65535", flag, port)
	}
	if h == "" {
		h = "127.0.0.1"
	}
	return net.JoinHostPort(h, strconv.FormatUint(n, 10)), nil
}

// Serve accepts connections on ln until ctx is done, then closes ln and
// every connection and waits for them.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	defer wg.Wait()
	go func() {
		<-ctx.Done()
		ln.Close()
	}()
	s.cfg.Logger.Info("RCON listening", "addr", ln.Addr().String())
	for {
		nc, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			return fmt.Errorf("rcon: accept: %w", err)
		}
		select {
		case s.slots <- struct{}{}:
		default:
			s.cfg.Logger.Warn("RCON connection refused: too many open", "remote", nc.RemoteAddr().String())
			nc.Close()
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-s.slots }()
			stop := context.AfterFunc(ctx, func() { nc.Close() })
			defer stop()
			s.serveConn(nc)
		}()
	}
}

// conn is one client connection.
type conn struct {
	srv    *Server
	nc     net.Conn
	r      *bufio.Reader
	by     string
	authed bool
}

func (s *Server) serveConn(nc net.Conn) {
	defer nc.Close()
	c := &conn{srv: s, nc: nc, r: bufio.NewReader(nc), by: "rcon " + nc.RemoteAddr().String()}
	log := s.cfg.Logger.With("remote", nc.RemoteAddr().String())
	for {
		timeout := s.cfg.IdleTimeout
		if !c.authed {
			timeout = s.cfg.AuthTimeout
		}
		_ = nc.SetReadDeadline(time.Now().Add(timeout))
		p, err := ReadPacket(c.r)
		if err != nil {
			if !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) {
				log.Info("RCON connection ended", "err", err)
			}
			return
		}
		keep, err := c.handle(p, log)
		if err != nil {
			log.Info("RCON connection ended", "err", err)
			return
		}
		if !keep {
			return
		}
	}
}

// handle answers one packet; keep false ends the connection.
func (c *conn) handle(p Packet, log *slog.Logger) (keep bool, err error) {
	switch {
	case p.Type == TypeAuth:
		return c.auth(p, log)
	case !c.authed:
		log.Warn("RCON command before authentication; closing")
		return false, c.send(Packet{ID: AuthFailedID, Type: TypeAuthResponse})
	case p.Type == TypeExecCommand:
		line := string(p.Body)
		var out []byte
		if strings.TrimSpace(line) != "" {
			log.Info("RCON command", "line", line)
			out = []byte(c.srv.cfg.Exec(c.by, line))
		}
		pkts := make([]Packet, 0, 1)
		for _, part := range split(out) {
			pkts = append(pkts, Packet{ID: p.ID, Type: TypeResponseValue, Body: part})
		}
		return true, c.send(pkts...)
	case p.Type == TypeResponseValue:
		// The end-of-response trick: mirror it, then the Source marker.
		return true, c.send(Packet{ID: p.ID, Type: TypeResponseValue},
			Packet{ID: p.ID, Type: TypeResponseValue, Body: mirrorMarker})
	default:
		return false, fmt.Errorf("unknown packet type %d", p.Type)
	}
}

// auth checks a SERVERDATA_AUTH, unless the address is over its limit.
func (c *conn) auth(p Packet, log *slog.Logger) (keep bool, err error) {
	key := addrkey.OfHostPort(c.nc.RemoteAddr().String())
	ok := false
	switch {
	case !c.srv.limiter.Peek(key, time.Now()):
		log.Warn("RCON authentication refused: too many failed attempts from this address")
	case subtle.ConstantTimeCompare(p.Body, c.srv.cfg.Password) == 1:
		ok = true
	default:
		c.srv.limiter.Allow(key, time.Now()) // a failure takes a token
		log.Warn("RCON authentication failed: wrong password")
	}
	id := p.ID
	if !ok {
		id = AuthFailedID
	}
	if err := c.send(Packet{ID: id, Type: TypeAuthResponse}); err != nil {
		return false, err
	}
	if ok {
		c.authed = true
		log.Info("RCON client authenticated")
	}
	return ok, nil
}

// send writes packets in one write under the write deadline.
func (c *conn) send(pkts ...Packet) error {
	var buf []byte
	for _, p := range pkts {
		buf = Append(buf, p)
	}
	_ = c.nc.SetWriteDeadline(time.Now().Add(c.srv.cfg.WriteTimeout))
	if _, err := c.nc.Write(buf); err != nil {
		return fmt.Errorf("rcon: write: %w", err)
	}
	return nil
}
