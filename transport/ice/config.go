package ice

import (
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"
)

// Defaults of Config.
const (
	// DefaultTimeout bounds one connection attempt, signalling included,
	// as OpenTTD's coordinator bounds its own.
	DefaultTimeout = 20 * time.Second
	// DefaultMaxBlob bounds a signalling blob read from the peer: a
	// session description with a few dozen candidates is a few KiB.
	DefaultMaxBlob = 64 << 10
	// DefaultBacklog is how many connected joiners a Listener holds
	// for the host to accept, and how many attempts it answers at once.
	DefaultBacklog = 16
)

// Server is a STUN or TURN server, as a browser's RTCIceServer: URLs such
// as "stun:HOST:3478", "turn:HOST:3478?transport=udp",
// "turn:HOST:3478?transport=tcp" or "turns:HOST:443?transport=tcp", and for
// TURN the credentials (with the TURN REST convention, a username
// "EXPIRY:NAME" and the HMAC of it as the credential).
type Server struct {
	URLs       []string
	Username   string
	Credential string
}

// Config configures one side of a connection. The zero value works: host
// candidates only.
type Config struct {
	// Servers are the STUN and TURN servers to gather candidates from.
	Servers []Server
	// RelayOnly gathers relay candidates only (a browser's "relay"
	// ICE transport policy): the connection goes through a TURN server
	// or fails.
	RelayOnly bool
	// Timeout bounds the attempt, from the first signal to the open
	// data channel (default DefaultTimeout); the caller's context may
	// end it sooner.
	Timeout time.Duration
	// MaxBlob bounds a signalling blob from the peer (default
	// DefaultMaxBlob).
	MaxBlob int
	// Backlog bounds a Listener (default DefaultBacklog).
	Backlog int
	// LoopbackOnly gathers candidates on the loopback interface only
	// and asks nothing by multicast DNS: for tests and benchmarks on one
	// machine, whose packets must not leave it.
	LoopbackOnly bool
	// Logger receives the attempts' failures at debug level (default
	// slog.Default()).
	Logger *slog.Logger
}

// Defaults returns c with every unset field filled in.
func (c Config) Defaults() Config {
	if c.Timeout == 0 {
		c.Timeout = DefaultTimeout
	}
	if c.MaxBlob == 0 {
		c.MaxBlob = DefaultMaxBlob
	}
	if c.Backlog == 0 {
		c.Backlog = DefaultBacklog
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return c
}

// Validate reports a configuration that cannot work.
func (c Config) Validate() error {
	var errs []error
	if c.Timeout < 0 {
		errs = append(errs, fmt.Errorf("timeout %v is negative", c.Timeout))
	}
	if c.MaxBlob < 0 {
		errs = append(errs, fmt.Errorf("largest signalling blob %d is negative", c.MaxBlob))
	}
	if c.Backlog < 0 {
		errs = append(errs, fmt.Errorf("backlog %d is negative", c.Backlog))
	}
	relays := 0
	for _, s := range c.Servers {
		if len(s.URLs) == 0 {
			errs = append(errs, errors.New("a STUN or TURN server has no URL"))
		}
		for _, u := range s.URLs {
			switch {
			case strings.HasPrefix(u, "turn:") || strings.HasPrefix(u, "turns:"):
				relays++
			case strings.HasPrefix(u, "stun:") || strings.HasPrefix(u, "stuns:"):
			default:
				errs = append(errs, fmt.Errorf("server URL %q is neither a stun: nor a turn: URL", u))
			}
		}
	}
	if c.RelayOnly && relays == 0 {
		errs = append(errs, errors.New("relay only, but no TURN server is given"))
	}
	return errors.Join(errs...)
}
