package turnserver

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/pion/logging"
	"github.com/pion/turn/v5"
)

// Config configures an embedded TURN server. Its zero value needs only
// Addr and Secret; withDefaults fills the rest in one place.
type Config struct {
	// Addr is the HOST:PORT it listens on, UDP and TCP alike (":3478").
	Addr string
	// RelayIP is the address relayed peers reach it at, given out in
	// allocations (default: Addr's IP; required when Addr's IP is empty
	// or unspecified).
	RelayIP net.IP
	// Secret is the TURN REST secret shared with the credentials' issuer.
	Secret []byte
	// Realm is the TURN realm (default "lockhost").
	Realm string
	// MaxAllocations bounds the relays open at once (default 1000).
	MaxAllocations int
	// AllocationLifetime is the longest a relay lives without a refresh
	// (default 10 min; clients refresh well before).
	AllocationLifetime time.Duration
	// AllowPrivatePeers lets relays reach loopback, private, link-local
	// and unspecified addresses, which are refused by default so that
	// the relay cannot reach into the network it stands in (coturn's
	// denied-peer-ip); for tests on one machine or a relay on a LAN.
	AllowPrivatePeers bool
}

// withDefaults fills every unset field.
func (c Config) withDefaults() Config {
	if c.Realm == "" {
		c.Realm = "lockhost"
	}
	if c.MaxAllocations == 0 {
		c.MaxAllocations = 1000
	}
	if c.AllocationLifetime == 0 {
		c.AllocationLifetime = 10 * time.Minute
	}
	if c.RelayIP == nil {
		if host, _, err := net.SplitHostPort(c.Addr); err == nil {
			if ip := net.ParseIP(host); ip != nil && !ip.IsUnspecified() {
				c.RelayIP = ip
			}
		}
	}
	return c
}

// Validate refuses a configuration that cannot work.
func (c Config) Validate() error {
	host, port, err := net.SplitHostPort(c.Addr)
	if err != nil {
		return fmt.Errorf("listen address %q: %w", c.Addr, err)
	}
	if _, err := strconv.ParseUint(port, 10, 16); err != nil {
		return fmt.Errorf("listen address %q: the port is not a number", c.Addr)
	}
	if host != "" && net.ParseIP(host) == nil {
		return fmt.Errorf("listen address %q: give an IP address, not a name", c.Addr)
	}
	if len(c.Secret) == 0 {
		return errors.New("no shared secret")
	}
	if c.MaxAllocations < 0 || c.AllocationLifetime < 0 {
		return errors.New("a negative bound")
	}
	if d := c.withDefaults(); d.RelayIP == nil || d.RelayIP.IsUnspecified() {
		return fmt.Errorf("%s: %w", c.Addr, ErrNoRelayIP)
	}
	return nil
}

// ErrNoRelayIP is Validate's error for a server that listens on all
// interfaces without a RelayIP.
var ErrNoRelayIP = errors.New("listening on all interfaces, it needs the relay address peers reach this machine at")

// Server is a running embedded TURN server.
type Server struct {
	srv     *turn.Server
	port    int
	relayIP net.IP
}

// Start listens at cfg.Addr on UDP and TCP and serves TURN until Close.
// Port 0 picks one port free for both.
func Start(cfg Config) (*Server, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	udp, tcp, err := listenBoth(cfg.Addr)
	if err != nil {
		return nil, err
	}
	host, _, _ := net.SplitHostPort(cfg.Addr)
	if host == "" {
		host = "0.0.0.0"
	}
	relay := func() turn.RelayAddressGenerator {
		return &turn.RelayAddressGeneratorStatic{RelayAddress: cfg.RelayIP, Address: host}
	}
	s := &Server{port: udp.LocalAddr().(*net.UDPAddr).Port, relayIP: cfg.RelayIP}
	var running atomic.Pointer[turn.Server] // set once NewServer returns; requests may come sooner
	quota := func(string, string, net.Addr) bool {
		srv := running.Load()
		return srv != nil && srv.AllocationCount() < cfg.MaxAllocations
	}
	permit := func(_ net.Addr, peer net.IP) bool { return cfg.AllowPrivatePeers || publicPeer(peer) }
	logs := logging.NewDefaultLoggerFactory()
	logs.DefaultLogLevel = logging.LogLevelDisabled
	srv, err := turn.NewServer(turn.ServerConfig{
		Realm:              cfg.Realm,
		AuthHandler:        turn.LongTermTURNRESTAuthHandler(string(cfg.Secret), logs.NewLogger("turn")),
		QuotaHandler:       quota,
		AllocationLifetime: cfg.AllocationLifetime,
		LoggerFactory:      logs,
		PacketConnConfigs:  []turn.PacketConnConfig{{PacketConn: udp, RelayAddressGenerator: relay(), PermissionHandler: permit}},
		ListenerConfigs:    []turn.ListenerConfig{{Listener: tcp, RelayAddressGenerator: relay(), PermissionHandler: permit}},
	})
	if err != nil {
		udp.Close()
		tcp.Close()
		return nil, fmt.Errorf("TURN server: %w", err)
	}
	s.srv = srv
	running.Store(srv)
	return s, nil
}

// publicPeer reports whether a relay may send to ip by default: not
// loopback, private, link-local, multicast or unspecified.
func publicPeer(ip net.IP) bool {
	return !(ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast() ||
		ip.IsMulticast() || ip.IsUnspecified() || ip.IsInterfaceLocalMulticast())
}

// listenBoth listens on UDP at addr and on TCP at the same port; for
// port 0, a few ports are tried until one is free for both.
func listenBoth(addr string) (net.PacketConn, net.Listener, error) {
	var lastErr error
	for range 10 {
		udp, err := net.ListenPacket("udp", addr)
		if err != nil {
			return nil, nil, fmt.Errorf("TURN server: %w", err)
		}
		host, _, _ := net.SplitHostPort(addr)
		port := strconv.Itoa(udp.LocalAddr().(*net.UDPAddr).Port)
		tcp, err := net.Listen("tcp", net.JoinHostPort(host, port))
		if err == nil {
			return udp, tcp, nil
		}
		udp.Close()
		lastErr = err
		if _, p, _ := net.SplitHostPort(addr); p != "0" {
			break
		}
	}
	return nil, nil, fmt.Errorf("TURN server: %w", lastErr)
}

// Port is the UDP and TCP port it listens on.
func (s *Server) Port() int { return s.port }

// URLs are its TURN URLs over UDP and over TCP at the relay address, as
// the coordinator hands them out.
func (s *Server) URLs() []string {
	hp := net.JoinHostPort(s.relayIP.String(), strconv.Itoa(s.port))
	return []string{"turn:" + hp + "?transport=udp", "turn:" + hp + "?transport=tcp"}
}

// Allocations is the number of relays open now.
func (s *Server) Allocations() int { return s.srv.AllocationCount() }

// Close stops the server and its relays.
func (s *Server) Close() error { return s.srv.Close() }
