package host

import (
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/lockhost/lockhost/defs"
	"github.com/lockhost/lockhost/lockstep"
	"github.com/lockhost/lockhost/snapshot"
	"github.com/lockhost/lockhost/wire"
)

// Content is what the handshake compares: the game version and mod list the
// host announces and the def databases a client must match.
type Content struct {
	GameVersion string
	Mods        []string
	Databases   []defs.Summary
	// Detail, if set, returns bytes sent with a Defs disconnect to let the
	// client name the differing defs (for example a def manifest of the
	// given database types).
	Detail func(types []string) []byte
}

// Config configures a Server. Its zero value works: Defaults fills every
// unset field.
type Config struct {
	// GameName is announced to joiners.
	GameName string
	// TickRate is simulated ticks per second at speed 1 (default 60).
	TickRate int
	// MaxPlayers caps the roster (default 8).
	MaxPlayers int
	// HandshakeTimeout bounds connect to the username being accepted
	// (default 10 s).
	HandshakeTimeout time.Duration
	// ReadyTimeout bounds download plus catch-up, from admission to
	// WorldReady (default 5 min).
	ReadyTimeout time.Duration
	// WriteTimeout bounds one frame write (default 15 s).
	WriteTimeout time.Duration
	// MaxFrame bounds a frame read from a client (default 64 KiB + slack
	// for a command).
	MaxFrame int
	// SendQueue is the per-client cap on queued small packets (default
	// 4096); a client that lets it fill is disconnected.
	SendQueue int
	// JoinPointMaxAge is how long a join point is reused for later joiners
	// before a new one is cut (default 10 s).
	JoinPointMaxAge time.Duration
	// GzipLevel is the compression level of join points (default
	// snapshot.DefaultLevel).
	GzipLevel int
	// Logger receives structured logs (default slog.Default()).
	Logger *slog.Logger
	// AfterTick, if set, is called on the session goroutine after every
	// Advance with the simulation; it must not keep sim.
	AfterTick func(res lockstep.TickResult, sim lockstep.Sim)
}

// Defaults returns c with every unset field filled in.
func (c Config) Defaults() Config {
	if c.GameName == "" {
		c.GameName = "lockhost colony"
	}
	if c.TickRate == 0 {
		c.TickRate = 60
	}
	if c.MaxPlayers == 0 {
		c.MaxPlayers = 8
	}
	if c.HandshakeTimeout == 0 {
		c.HandshakeTimeout = 10 * time.Second
	}
	if c.ReadyTimeout == 0 {
		c.ReadyTimeout = 5 * time.Minute
	}
	if c.WriteTimeout == 0 {
		c.WriteTimeout = 15 * time.Second
	}
	if c.MaxFrame == 0 {
		c.MaxFrame = wire.MaxCommandPayload + 4096
	}
	if c.SendQueue == 0 {
		c.SendQueue = 4096
	}
	if c.JoinPointMaxAge == 0 {
		c.JoinPointMaxAge = 10 * time.Second
	}
	if c.GzipLevel == 0 {
		c.GzipLevel = snapshot.DefaultLevel
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return c
}

// Validate reports settings that cannot work.
func (c Config) Validate() error {
	var errs []error
	if c.TickRate < 1 || c.TickRate > 1000 {
		errs = append(errs, fmt.Errorf("tick rate %d outside 1..1000", c.TickRate))
	}
	if c.MaxPlayers < 1 || c.MaxPlayers > wire.MaxPlayers {
		errs = append(errs, fmt.Errorf("max players %d outside 1..%d", c.MaxPlayers, wire.MaxPlayers))
	}
	if c.HandshakeTimeout < 0 || c.ReadyTimeout < 0 || c.WriteTimeout < 0 || c.JoinPointMaxAge < 0 {
		errs = append(errs, errors.New("timeouts must not be negative"))
	}
	if c.MaxFrame < 1024 || c.MaxFrame > wire.DefaultMaxFrame {
		errs = append(errs, fmt.Errorf("max frame %d outside 1024..%d", c.MaxFrame, wire.DefaultMaxFrame))
	}
	if c.SendQueue < 16 {
		errs = append(errs, fmt.Errorf("send queue %d below 16", c.SendQueue))
	}
	if len(c.GameName) > 64 {
		errs = append(errs, errors.New("game name longer than 64 bytes"))
	}
	return errors.Join(errs...)
}
