package host

import (
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/lockhost/lockhost/defs"
	"github.com/lockhost/lockhost/lockstep"
	"github.com/lockhost/lockhost/password"
	"github.com/lockhost/lockhost/roster"
	"github.com/lockhost/lockhost/snapshot"
	"github.com/lockhost/lockhost/wire"
)

// Content is what the handshake compares: the game version and mod list the
// host announces and the def databases a client must match. A game without
// def databases leaves Databases empty; a joiner then declares none.
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
	// MaxPlayers caps the players online (default 8).
	MaxPlayers int
	// MaxSpectators caps the spectators online, counted apart from players
	// (default 4; -1 for none).
	MaxSpectators int
	// Factions says how players are put into factions (default shared).
	Factions roster.FactionMode
	// Password, if set, is required of every joiner through a
	// challenge-response; it never crosses the wire.
	Password []byte
	// HandshakeTimeout bounds connect to DefsOK, clock sync included
	// (default 10 s).
	HandshakeTimeout time.Duration
	// UsernameTimeout bounds DefsOK to a usable username (default 10 s).
	UsernameTimeout time.Duration
	// DownloadStallTimeout is how long a download may go without the
	// client acknowledging progress (default 30 s).
	DownloadStallTimeout time.Duration
	// MinDownloadRate is the slowest average download, in bytes per
	// second, a joiner may take: the whole world must be acknowledged
	// within DownloadStallTimeout plus its size at this rate, or the joiner
	// is dropped with reason Timeout and its slot freed (default 16 KiB/s;
	// -1 for no minimum). A client that acknowledges a byte now and then
	// cannot hold a slot.
	MinDownloadRate float64
	// DownloadWindow is how far, in bytes, the world download may run
	// ahead of the joiner's acknowledgements (default 2 MiB; -1 for no
	// limit). It bounds what a connection that drops mid-download wastes:
	// bytes written but never received are sent again on the retry.
	DownloadWindow int64
	// CatchUpTimeout bounds the end of the download to WorldReady
	// (default 2 min).
	CatchUpTimeout time.Duration
	// ClockWindow is how far a clock-sync round may disagree with the
	// current offset estimate and still pass (default 50 ms): it bounds
	// jitter and asymmetry, not latency.
	ClockWindow time.Duration
	// ClockRetries is how many clock-sync rounds a client gets before it is
	// refused (default 32).
	ClockRetries int
	// ConnRate is how many new connections per second one IP address (an
	// IPv6 address counted by its /64) may open, with bursts of ConnBurst
	// (defaults 5 and 10; ConnRate -1 disables the limit). At most 65,536
	// addresses are tracked; while that many are, a new address is refused.
	ConnRate  float64
	ConnBurst int
	// MaxPending caps the connections not yet admitted (TLS, handshake,
	// username), in all (default 64), from one address, an IPv6 address
	// counted by its /64 (MaxPendingPerAddr, default 4), and from one
	// network, an IPv4 /24 or an IPv6 /64 (MaxPendingPerPrefix, default
	// 16). A newcomer over a cap is not refused: the pending connection
	// that has done least for longest (idle before slow, slow before
	// active) is closed with reason RateLimited to make room, one of the
	// newcomer's own address (or network) when that is over its cap. From
	// half full on, the handshake and username deadlines of new steps
	// shrink with the room left, to a fifth when full. An admitted
	// connection (downloading or playing) is never evicted. -1 lifts a cap.
	MaxPending          int
	MaxPendingPerAddr   int
	MaxPendingPerPrefix int
	// PasswordRate is how many password attempts per second one address
	// (an IPv6 address by its /64) may make, with bursts of PasswordBurst
	// (defaults 0.5 and 10: room for a group behind one NAT address); an
	// attempt over it is refused as RateLimited without checking the
	// password. PasswordRateAll and PasswordBurstAll bound the checks of
	// all addresses together (defaults 5 and 20): past the burst, a client
	// must solve a proof of work before its password is checked, harder
	// by a bit for every 4 checks more, up to PasswordPuzzleMaxBits
	// (default 24; -1: no puzzle, and attempts past the burst are refused
	// for everyone). In any T seconds at most PasswordBurstAll +
	// 4*(PasswordPuzzleMaxBits-7) + PasswordRateAll*T passwords are
	// checked (88 + 5T by default); the wire spec has the details. They
	// apply only when the session has a password; PasswordRate -1 lifts
	// them all.
	PasswordRate          float64
	PasswordBurst         int
	PasswordRateAll       float64
	PasswordBurstAll      int
	PasswordPuzzleMaxBits int
	// RefusalLogEvery is the interval of refusal logging: per address
	// (IPv6 by /64) the first refusal of a connection that was never
	// admitted is logged in full, the rest of the interval's are summed in
	// one "more clients refused" line (default 10 s).
	RefusalLogEvery time.Duration
	// HandshakeMaxFrame bounds a frame read from a client before it is
	// admitted (default 80 KiB: room for a Client_Defs of
	// wire.MaxDatabases databases); MaxFrame applies afterwards.
	HandshakeMaxFrame int
	// SendQueueBytes caps the bytes of small packets waiting to be sent to
	// one client (default 8 MiB; the world download is streamed apart);
	// a client that lets more pile up is disconnected as too slow.
	SendQueueBytes int64
	// WriteTimeout bounds one frame write (default 15 s).
	WriteTimeout time.Duration
	// MaxFrame bounds a frame read from a client (default room for a
	// command of wire.MaxClientCommandPayload).
	MaxFrame int
	// MaxCommandPayload bounds a command's payload (default and most
	// wire.MaxCommandPayload, 64 KiB); a bigger one is refused with a
	// notice and the player stays.
	MaxCommandPayload int
	// CommandRate is how many commands per second one player may send,
	// with bursts of CommandBurst (defaults 100 and 200); excess commands
	// are refused with a notice.
	CommandRate  float64
	CommandBurst int
	// ChatRate is how many chat lines per second one player may send,
	// across rejoins, with bursts of ChatBurst (defaults 1 and 5); a line
	// over it is refused with a notice to the sender.
	ChatRate  float64
	ChatBurst int
	// LagPolicy says what happens when a playing client falls more than
	// MaxLag ticks behind the host (default LagWait).
	LagPolicy LagPolicy
	// MaxLag is how far behind, in ticks, a playing client may fall
	// (default 120, two seconds at 60 ticks/s). Under LagWait the host
	// runs at half speed past MaxLag/2 and holds time past MaxLag.
	MaxLag uint64
	// MaxHold is how long LagWait holds time for one player before
	// dropping them with reason Lagging (default 1 min; negative: hold as
	// long as they stay connected). A client that stops advancing, or
	// claims to, cannot stop the session for longer.
	MaxHold time.Duration
	// HoldWindow is the window of MaxHold: the time held for one player
	// adds up over its rejoins (same session token) and is forgotten
	// only HoldWindow after it began (default 10 min).
	HoldWindow time.Duration
	// DropCooldown is how long a player dropped for lagging (MaxHold) or
	// for desyncs must wait before it may rejoin with its token (default
	// 2 min; negative for none); a rejoin sooner is refused with the drop's
	// reason.
	DropCooldown time.Duration
	// SendQueue is the per-client cap on queued small packets (default
	// 1024, 17 s of ticks at 60/s); a client that lets it fill is
	// disconnected.
	SendQueue int
	// JoinPointMaxAge is how long a join point is reused for later joiners
	// before a new one is cut (default 10 s).
	JoinPointMaxAge time.Duration
	// Compression is the codec of join points, repairs and saves: "zstd"
	// (the default) or "gzip". A joiner that does not read it (protocol 3)
	// is sent gzip.
	Compression string
	// GzipLevel is the gzip level (default snapshot.DefaultLevel).
	GzipLevel int
	// ZstdLevel is the zstd level (default snapshot.DefaultZstdLevel).
	ZstdLevel int
	// KeepaliveEvery is how often admitted clients get a keepalive
	// (default 1 s).
	KeepaliveEvery time.Duration
	// Timeout drops an admitted client the host has heard nothing from for
	// this long (default 30 s), with reason Timeout.
	Timeout time.Duration
	// RejoinGrace is how long after leaving a player may rejoin as itself
	// with its session token (default 5 min).
	RejoinGrace time.Duration
	// Save says where and how often the session is saved (default: not).
	Save SaveConfig
	// LazyJoinPoints builds a join point only when a joiner needs one. By
	// default the host keeps one built in the background (at most ~5% of a
	// core), so joiners do not wait for compression.
	LazyJoinPoints bool
	// HashEvery is the interval in ticks at which every client reports
	// its state hashes and the host compares them with its own (default
	// lockstep.DefaultHashEvery, 60; -1 turns desync detection off).
	HashEvery int
	// HashWindow is how many ticks back the host keeps its own hashes: a
	// report for an older tick is refused (default 1800, 30 s at 60
	// ticks/s; at least MaxLag and HashEvery).
	HashWindow uint64
	// DesyncDir, if set, is the folder each desync report is written to
	// (package desync); empty writes none (the log still has a line).
	DesyncDir string
	// BanFile, if set, is where the ban list is kept (the data folder's
	// BansFileName); every change rewrites it atomically and it is read
	// at New, so bans survive restarts. Empty keeps bans in memory.
	BanFile string
	// DesyncLimit is how many desyncs one player may have within
	// DesyncWindow, counted over its rejoins (same session token); one
	// more drops it with reason Desync (defaults 3 and 10 min).
	DesyncLimit  int
	DesyncWindow time.Duration
	// ResyncTimeout bounds a repair, from detection to matching hashes
	// (default 2 min); past it the player is dropped with reason Desync.
	ResyncTimeout time.Duration
	// DropUnverified, if above 0, drops with reason Desync a playing
	// client whose state the host cannot check: one that has reported no
	// state hashes for DropUnverified intervals (HashEvery ticks each)
	// past MaxLag, counted from its WorldReady or its last report (see
	// unverifiedAfter). 0, the default, only marks such a player
	// unverified (Overview, metrics).
	DropUnverified int
	// TLS, if set, makes the game port speak TLS only (1.3 or later):
	// each connection's TLS handshake runs under HandshakeTimeout before
	// anything else (package tlsid makes a self-signed identity). Nil
	// speaks the plain protocol.
	TLS *tls.Config
	// Logger receives structured logs (default slog.Default()).
	Logger *slog.Logger
	// Observer, if set, hears about joins, desyncs and saves as they
	// happen (metrics); Server.Overview shows the recent ones either way.
	Observer Observer
	// AfterTick, if set, is called on the session goroutine after every
	// Advance with the simulation; it must not keep sim. It is for tools
	// and tests that check every tick (a soak's determinism check); it
	// runs on the tick, so it must return quickly.
	AfterTick func(res lockstep.TickResult, sim lockstep.Sim)
	// Relay is relay mode's settings (relay.go); only NewRelay reads them.
	Relay RelayConfig
}

// Defaults returns c with every unset field filled in: the one place the
// defaults live.
func (c Config) Defaults() Config {
	orDefault(&c.GameName, "lockhost colony")
	orDefault(&c.TickRate, 60)
	orDefault(&c.MaxPlayers, 8)
	switch c.MaxSpectators {
	case 0:
		c.MaxSpectators = 4
	case -1:
		c.MaxSpectators = 0
	}
	orDefault(&c.HandshakeTimeout, 10*time.Second)
	orDefault(&c.UsernameTimeout, 10*time.Second)
	orDefault(&c.DownloadStallTimeout, 30*time.Second)
	orDefault(&c.MinDownloadRate, 16<<10)
	orDefault(&c.DownloadWindow, 2<<20)
	orDefault(&c.CatchUpTimeout, 2*time.Minute)
	orDefault(&c.ClockWindow, 50*time.Millisecond)
	orDefault(&c.ClockRetries, 32)
	orDefault(&c.ConnRate, 5)
	orDefault(&c.ConnBurst, 10)
	orDefault(&c.MaxPending, 64)
	orDefault(&c.MaxPendingPerAddr, 4)
	orDefault(&c.MaxPendingPerPrefix, 16)
	orDefault(&c.PasswordPuzzleMaxBits, 24)
	orDefault(&c.PasswordRate, 0.5)
	orDefault(&c.PasswordBurst, 10)
	orDefault(&c.PasswordRateAll, 5)
	orDefault(&c.PasswordBurstAll, 20)
	orDefault(&c.RefusalLogEvery, 10*time.Second)
	orDefault(&c.HandshakeMaxFrame, 80<<10)
	orDefault(&c.WriteTimeout, 15*time.Second)
	orDefault(&c.MaxFrame, wire.MaxClientCommandPayload+4096)
	orDefault(&c.MaxCommandPayload, wire.MaxCommandPayload)
	orDefault(&c.CommandRate, 100)
	orDefault(&c.CommandBurst, 200)
	orDefault(&c.ChatRate, 1)
	orDefault(&c.ChatBurst, 5)
	orDefault(&c.MaxLag, 120)
	orDefault(&c.MaxHold, time.Minute)
	orDefault(&c.HoldWindow, 10*time.Minute)
	orDefault(&c.DropCooldown, 2*time.Minute)
	orDefault(&c.SendQueue, 1024)
	orDefault(&c.SendQueueBytes, 8<<20)
	orDefault(&c.JoinPointMaxAge, 10*time.Second)
	orDefault(&c.Compression, snapshot.Zstd.String())
	orDefault(&c.GzipLevel, snapshot.DefaultLevel)
	orDefault(&c.ZstdLevel, snapshot.DefaultZstdLevel)
	orDefault(&c.Logger, slog.Default())
	switch c.HashEvery {
	case 0:
		c.HashEvery = lockstep.DefaultHashEvery
	case -1:
		c.HashEvery = 0
	}
	orDefault(&c.HashWindow, max(1800, 2*c.MaxLag, 4*uint64(c.HashEvery)))
	orDefault(&c.DesyncLimit, 3)
	orDefault(&c.DesyncWindow, 10*time.Minute)
	orDefault(&c.ResyncTimeout, 2*time.Minute)
	c.Save = c.Save.withDefaults()
	orDefault(&c.KeepaliveEvery, time.Second)
	orDefault(&c.Timeout, 30*time.Second)
	orDefault(&c.RejoinGrace, 5*time.Minute)
	return c
}

// codec is the configured codec (Compression); gzip when it names none.
func (c Config) codec() snapshot.Codec {
	codec, err := snapshot.ParseCodec(c.Compression)
	if err != nil {
		return snapshot.Gzip
	}
	return codec
}

// compression is codec at its configured level.
func (c Config) compression(codec snapshot.Codec) snapshot.Compression {
	if codec == snapshot.Zstd {
		return snapshot.Compression{Codec: codec, Level: c.ZstdLevel}
	}
	return snapshot.Compression{Codec: codec, Level: c.GzipLevel}
}

// orDefault sets *p to v when it holds its type's zero value, that is when
// the field was left unset.
func orDefault[T comparable](p *T, v T) {
	var zero T
	if *p == zero {
		*p = v
	}
}

// Validate reports settings that cannot work.
func (c Config) Validate() error {
	var errs []error
	if c.DropUnverified < 0 {
		errs = append(errs, fmt.Errorf("drop-unverified %d is negative", c.DropUnverified))
	}
	if c.TickRate < 1 || c.TickRate > 1000 {
		errs = append(errs, fmt.Errorf("tick rate %d outside 1..1000", c.TickRate))
	}
	if c.MaxPlayers < 1 || c.MaxPlayers > wire.MaxPlayers {
		errs = append(errs, fmt.Errorf("max players %d outside 1..%d", c.MaxPlayers, wire.MaxPlayers))
	}
	if c.MaxSpectators < 0 || c.MaxSpectators > wire.MaxPlayers {
		errs = append(errs, fmt.Errorf("max spectators %d outside 0..%d", c.MaxSpectators, wire.MaxPlayers))
	}
	if c.MaxPlayers+c.MaxSpectators > wire.MaxPlayers {
		errs = append(errs, fmt.Errorf("players plus spectators over %d", wire.MaxPlayers))
	}
	for _, d := range []time.Duration{c.HandshakeTimeout, c.UsernameTimeout, c.DownloadStallTimeout,
		c.CatchUpTimeout, c.WriteTimeout, c.JoinPointMaxAge, c.ClockWindow, c.RefusalLogEvery} {
		if d < 0 {
			errs = append(errs, errors.New("timeouts must not be negative"))
			break
		}
	}
	if c.Compression != "" {
		if _, err := snapshot.ParseCodec(c.Compression); err != nil {
			errs = append(errs, err)
		}
	}
	if c.MinDownloadRate != -1 && c.MinDownloadRate <= 0 {
		errs = append(errs, fmt.Errorf("minimum download rate %v bytes/s: must be positive (-1 for none)", c.MinDownloadRate))
	}
	if c.ClockRetries < 1 || c.ClockRetries > 255 {
		errs = append(errs, fmt.Errorf("clock retries %d outside 1..255", c.ClockRetries))
	}
	if c.ConnRate != -1 && (c.ConnRate <= 0 || c.ConnBurst < 1) {
		errs = append(errs, fmt.Errorf("connection rate %v/s with burst %d: both must be positive (rate -1 disables)", c.ConnRate, c.ConnBurst))
	}
	if c.PasswordRate != -1 && (c.PasswordRate <= 0 || c.PasswordBurst < 1 || c.PasswordRateAll <= 0 || c.PasswordBurstAll < 1) {
		errs = append(errs, fmt.Errorf("password attempt rates %v/s (burst %d) per address and %v/s (burst %d) in all: all must be positive (rate -1 disables)",
			c.PasswordRate, c.PasswordBurst, c.PasswordRateAll, c.PasswordBurstAll))
	}
	if c.MaxCommandPayload < 0 || c.MaxCommandPayload > wire.MaxCommandPayload {
		errs = append(errs, fmt.Errorf("max command payload %d outside 0..%d", c.MaxCommandPayload, wire.MaxCommandPayload))
	}
	if c.ChatRate <= 0 || c.ChatBurst < 1 {
		errs = append(errs, fmt.Errorf("chat rate %v/s with burst %d: both must be positive", c.ChatRate, c.ChatBurst))
	}
	if c.CommandRate <= 0 || c.CommandBurst < 1 {
		errs = append(errs, fmt.Errorf("command rate %v/s with burst %d: both must be positive", c.CommandRate, c.CommandBurst))
	}
	if c.LagPolicy > LagDrop {
		errs = append(errs, fmt.Errorf("unknown lag policy %d", c.LagPolicy))
	}
	if c.KeepaliveEvery <= 0 || c.Timeout < 2*c.KeepaliveEvery {
		errs = append(errs, fmt.Errorf("timeout %v must be at least two keepalive intervals (%v)", c.Timeout, c.KeepaliveEvery))
	}
	if c.Save.Keep < 1 {
		errs = append(errs, fmt.Errorf("autosaves kept %d: keep at least one", c.Save.Keep))
	}
	if c.Factions > roster.FactionsPerPlayer {
		errs = append(errs, fmt.Errorf("unknown faction mode %d", c.Factions))
	}
	if c.MaxFrame < 1024 || c.MaxFrame > wire.DefaultMaxFrame {
		errs = append(errs, fmt.Errorf("max frame %d outside 1024..%d", c.MaxFrame, wire.DefaultMaxFrame))
	}
	if c.HandshakeMaxFrame < 1024 || c.HandshakeMaxFrame > c.MaxFrame {
		errs = append(errs, fmt.Errorf("handshake max frame %d outside 1024..%d (the max frame)", c.HandshakeMaxFrame, c.MaxFrame))
	}
	if c.MaxPending < -1 || c.MaxPendingPerAddr < -1 || c.MaxPendingPerPrefix < -1 {
		errs = append(errs, fmt.Errorf("pending connection caps %d, %d per address and %d per network: use a count, or -1 for none",
			c.MaxPending, c.MaxPendingPerAddr, c.MaxPendingPerPrefix))
	}
	if c.PasswordPuzzleMaxBits != -1 && (c.PasswordPuzzleMaxBits < puzzleBaseBits || c.PasswordPuzzleMaxBits > password.MaxPuzzleBits) {
		errs = append(errs, fmt.Errorf("password puzzle of at most %d bits outside %d..%d (-1 for none)",
			c.PasswordPuzzleMaxBits, puzzleBaseBits, password.MaxPuzzleBits))
	}
	if c.SendQueue < 16 {
		errs = append(errs, fmt.Errorf("send queue %d below 16", c.SendQueue))
	}
	if c.HashEvery < 0 || c.HashEvery > 1<<20 {
		errs = append(errs, fmt.Errorf("hash interval %d outside 1..%d ticks (or -1 for none)", c.HashEvery, 1<<20))
	}
	if c.HashEvery > 0 && c.HashWindow < uint64(c.HashEvery) {
		errs = append(errs, fmt.Errorf("hash window %d shorter than the hash interval %d", c.HashWindow, c.HashEvery))
	}
	if c.DesyncLimit < 1 || c.DesyncWindow < 0 || c.ResyncTimeout < 0 {
		errs = append(errs, fmt.Errorf("desync limit %d in %v, repair timeout %v: the limit must be at least 1, times not negative", c.DesyncLimit, c.DesyncWindow, c.ResyncTimeout))
	}
	if len(c.GameName) > 64 {
		errs = append(errs, errors.New("game name longer than 64 bytes"))
	}
	return errors.Join(errs...)
}

// LagPolicy says what the host does about a playing client that falls too
// far behind.
type LagPolicy uint8

// Lag policies.
const (
	// LagWait slows and then holds the session's time until the laggard
	// catches up (co-op: nobody is left behind). Time resumes by itself.
	LagWait LagPolicy = iota
	// LagDrop disconnects the laggard with reason Lagging.
	LagDrop
)

// ParseLagPolicy reads "wait" or "drop".
func ParseLagPolicy(s string) (LagPolicy, error) {
	switch s {
	case "wait", "":
		return LagWait, nil
	case "drop":
		return LagDrop, nil
	}
	return 0, fmt.Errorf("lag policy %q: use wait or drop", s)
}
