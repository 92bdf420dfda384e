package join

import (
	"context"
	"crypto/tls"
	"errors"
	"log/slog"
	"net"
	"time"

	"github.com/lockhost/lockhost/defs"
	"github.com/lockhost/lockhost/lockstep"
	"github.com/lockhost/lockhost/wire"
)

// Phase names a stage of joining, for progress reports.
type Phase string

// Phases in order.
const (
	PhaseConnect   Phase = "connect"
	PhaseHandshake Phase = "handshake"
	// PhaseQueued is a wait for the host's upload slot, before the
	// download starts: the host sends a limited number of worlds at once
	// (a notice says the place in line).
	PhaseQueued   Phase = "queued"
	PhaseDownload Phase = "download"
	PhaseLoad     Phase = "load"
	PhaseCatchUp  Phase = "catch-up"
	// PhasePlay is the session after WorldReady; only a Reconnector
	// reports it (ReconnectEvent.Phase).
	PhasePlay Phase = "play"
)

// Progress is a snapshot of how far a join has come.
type Progress struct {
	Phase Phase
	// Done and Total are bytes during download and ticks during catch-up.
	// While queued, Done is the place in line (1 the next to be served,
	// 0 when the host did not say) and Total is 0.
	Done, Total uint64
}

// Config configures a join. Its zero value works apart from Addr, Name and
// Loader: Defaults fills every unset field from DefaultConfig.
type Config struct {
	// Addr is the host's address, HOST:PORT.
	Addr string
	// Name is the username to join as.
	Name string
	// Password answers the host's password challenge, if it sends one.
	Password []byte
	// Spectate joins as a spectator: the world and the live stream, but
	// no commands.
	Spectate bool
	// Token rejoins as the player a previous session's Token belonged to:
	// same player ID, name and faction (see Session.Token).
	Token []byte
	// Resume, if set, carries the join over retries before WorldReady: an
	// attempt records in it the session token and the blobs it
	// downloaded, and an attempt with a Resume that holds a token (and no
	// Token above) rejoins with it and asks only for what it lacks. Use
	// one Resume per join.
	Resume *Resume
	// held is the simulation a Reconnector kept over a dropped
	// connection, to rejoin from (held.go); nil for any other join.
	held *heldWorld
	// Databases are the client's def databases; empty for a game without
	// any (the host's must be empty too).
	Databases []defs.Summary
	// Loader rebuilds the simulation from the downloaded state.
	Loader lockstep.Loader
	// MapLoader, if set, is used instead of Loader: each map is loaded as
	// soon as it is inflated and its raw bytes dropped, so the joiner holds
	// about one copy of the world.
	MapLoader lockstep.MapLoader
	// Dial, if set, makes the connection to Addr instead of a TCP dial:
	// the transport seam. Whatever it returns carries the protocol's
	// frames as a byte stream (a WebSocket connection wrapped as a
	// net.Conn, a tunnel, one end of a net.Pipe); TLS, if set, runs over
	// it. It is called once per attempt, with the join's context, and
	// should give up by that context's deadline or DialTimeout.
	Dial func(ctx context.Context, addr string) (net.Conn, error)
	// TLS, if set, speaks TLS to the host (which must run with TLS), for
	// example a tlsid.ClientConfig that pins the host's certificate. The
	// TLS handshake runs under HandshakeTimeout.
	TLS *tls.Config
	// DialTimeout bounds the connect, TCP or Dial's (default 10 s).
	// Like every timeout here, 0 takes the default and a negative
	// duration sets no limit.
	DialTimeout time.Duration
	// HandshakeTimeout bounds connect to DefsOK and the username (default
	// 15 s).
	HandshakeTimeout time.Duration
	// ReadyTimeout bounds download, load and catch-up (default 5 min).
	ReadyTimeout time.Duration
	// HostTimeout gives up on a host that has sent nothing for this long
	// once in the session (default 30 s; the host sends a keepalive every
	// second).
	HostTimeout time.Duration
	// MaxPayload bounds the world download (default 2 GiB).
	MaxPayload uint64
	// MaxRaw bounds each decompressed blob (default 1 GiB).
	MaxRaw int64
	// MaxRawTotal bounds the whole decompressed world (default 4 GiB).
	MaxRawTotal uint64
	// MaxFrame bounds one frame from the host (default wire.DefaultMaxFrame).
	MaxFrame int
	// Progress, if set, is called as the join advances (throttled by the
	// caller as it likes).
	Progress func(Progress)
	// PrepareMemory, if set, is called once a world's header has
	// arrived, before any of its blobs, with the bytes of the world's
	// raw encoding (at most MaxRawTotal) and of the download (at most
	// MaxPayload): a program may ready memory for what it is about to
	// hold (the join tool asks the kernel for huge pages). Both are the
	// host's claims, not yet checked against the data.
	PrepareMemory func(raw, payload uint64)
	// Notice, if set, receives notices from the host.
	Notice func(text string)
	// Chat, if set, receives the chat lines the host relays (this
	// client's own included); a line from the host itself has an empty
	// From.
	Chat func(ChatLine)
	// Players, if set, receives the whole player list, in ID order, after
	// every change.
	Players func([]Player)
	// OnStep, if set, is called on the simulation goroutine after every
	// simulated tick.
	OnStep func(sim lockstep.Sim)
	// OnApply, if set, is called after every command is applied.
	OnApply func(cmd lockstep.Command)
	// Desync, if set, receives the host's desync events: a player's state
	// diverged (this client's or another's), was repaired, or the player
	// was dropped.
	Desync func(DesyncEvent)
	// Resynced, if set, is called on the simulation goroutine when a
	// repair of this client's state has gone in, before the host is told
	// (so it comes before any DesyncRepaired event about this client).
	Resynced func(Resync)
	// Light, for load tests: after WorldReady the client simulates nothing;
	// commands count as applied when they arrive (OnApply is called then)
	// and it reports the host's grant as its tick.
	Light bool
	// Logger receives debug logs (default slog.Default()).
	Logger *slog.Logger
	// ArbiterSecret, if set, joins a relay host as its arbiter
	// (docs/protocol.md, section 14): the client proves the secret and
	// uploads the world when the host asks (arbiter.go). Join fails with
	// ErrNotRelay on a host that takes no arbiter.
	ArbiterSecret []byte
	// World makes the world an arbiter uploads when the host's session
	// is new; an arbiter without it can only join a session that has a
	// world.
	World func() (lockstep.Sim, error)
	// Sections, if set, makes the maps' regenerable sections the host
	// names (docs/protocol.md, section 8.6) while the handshake goes on,
	// so the host sends those maps without them. nil: every map is
	// downloaded whole.
	Sections lockstep.SectionBuilder
	// SectionMinRTT: the sections are made only when the handshake's
	// round trip (Client_Defs to the host's answer) took at least this
	// long (default 5 ms; negative: whatever the round trip). On a link
	// that fast (loopback, a LAN) the download beats making them.
	SectionMinRTT time.Duration
	// SectionWait bounds how long the username waits for the sections
	// still being made; those done by then are named (default 5 s,
	// within the host's 10 s for the username; negative: no wait).
	SectionWait time.Duration
}

// DefaultConfig is the configuration a zero Config stands for, with every
// default filled in: the one place the join's defaults are written.
// Fields whose default is "none" (the address, name, loaders, TLS, Dial,
// the callbacks) are left empty.
func DefaultConfig() Config {
	return Config{
		DialTimeout:      10 * time.Second,
		HandshakeTimeout: 15 * time.Second,
		ReadyTimeout:     5 * time.Minute,
		HostTimeout:      30 * time.Second,
		MaxPayload:       2 << 30,
		MaxRaw:           1 << 30,
		MaxRawTotal:      4 << 30,
		MaxFrame:         wire.DefaultMaxFrame,
		Logger:           slog.Default(),
		SectionMinRTT:    5 * time.Millisecond,
		SectionWait:      5 * time.Second,
	}
}

// Defaults returns c with every unset (zero) field taken from
// DefaultConfig, as host.Config does: 0 always means "the default". A
// timeout that can be switched off takes a negative duration for "no
// limit" (-1 s, say), kept as it is.
func (c Config) Defaults() Config {
	d := DefaultConfig()
	fill := func(f *time.Duration, def time.Duration) {
		if *f == 0 {
			*f = def
		}
	}
	fill(&c.DialTimeout, d.DialTimeout)
	fill(&c.HandshakeTimeout, d.HandshakeTimeout)
	fill(&c.ReadyTimeout, d.ReadyTimeout)
	fill(&c.HostTimeout, d.HostTimeout)
	fill(&c.SectionMinRTT, d.SectionMinRTT)
	fill(&c.SectionWait, d.SectionWait)
	if c.MaxPayload == 0 {
		c.MaxPayload = d.MaxPayload
	}
	if c.MaxRaw == 0 {
		c.MaxRaw = d.MaxRaw
	}
	if c.MaxRawTotal == 0 {
		c.MaxRawTotal = d.MaxRawTotal
	}
	if c.MaxFrame == 0 {
		c.MaxFrame = d.MaxFrame
	}
	if c.Logger == nil {
		c.Logger = d.Logger
	}
	return c
}

// deadline is the read or write deadline a timeout of d sets from now:
// none (the zero time) for a negative d, which means no limit.
func deadline(d time.Duration) time.Time {
	if d < 0 {
		return time.Time{}
	}
	return time.Now().Add(d)
}

// withTimeout is context.WithTimeout, with no limit for a negative d.
func withTimeout(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	if d < 0 {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, d)
}

// Validate reports settings that cannot work.
func (c Config) Validate() error {
	var errs []error
	if c.Addr == "" {
		errs = append(errs, errors.New("no host address"))
	}
	if c.Name == "" {
		errs = append(errs, errors.New("no username"))
	}
	if c.Loader == nil && c.MapLoader == nil {
		errs = append(errs, errors.New("no simulation loader"))
	}
	if len(c.ArbiterSecret) > 0 && (c.Light || c.Spectate) {
		errs = append(errs, errors.New("an arbiter simulates and plays: not light, not a spectator"))
	}
	if c.MaxFrame < wire.MaxChunkData+1024 {
		errs = append(errs, errors.New("max frame too small for world chunks"))
	}
	return errors.Join(errs...)
}
