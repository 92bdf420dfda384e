package host

import (
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"time"

	"github.com/lockhost/lockhost/defs"
	"github.com/lockhost/lockhost/host/gate"
	"github.com/lockhost/lockhost/host/roster"
	"github.com/lockhost/lockhost/lockstep"
	"github.com/lockhost/lockhost/modsync"
	"github.com/lockhost/lockhost/password"
	"github.com/lockhost/lockhost/saves"
	"github.com/lockhost/lockhost/snapshot"
	"github.com/lockhost/lockhost/status"
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
	// Share, if set, is the content the host shares (host serve
	// --share-content; docs/protocol.md, section 17): offered to every
	// joiner in Server_ModList and sent over the session connection on
	// request; ContentHandler serves it over HTTP. The host gates and
	// paces it with world transfer's upload slots and cap.
	Share *modsync.Handler
}

// Config configures a Server. Its zero value works: Defaults fills every
// unset field from DefaultConfig. A field that can be switched off takes
// -1 for off (none, no limit, never; -1 s or any negative duration for
// a duration), since 0 means "the default"; host serve's options take the
// same values.
type Config struct {
	// GameName is announced to joiners (default "lockhost colony").
	GameName string
	// TickRate is simulated ticks per second at speed 1 (default 60).
	TickRate int
	// Factions says how players are put into factions (default shared).
	Factions roster.FactionMode
	// Limits caps what the session holds and what one client may send.
	Limits LimitConfig
	// Timeouts are the deadlines of each phase of a connection.
	Timeouts TimeoutConfig
	// Admission guards the door: the password, TLS, bans and the limits
	// on connections that are not yet admitted.
	Admission AdmissionConfig
	// Join says how a joiner gets the world: join points, their codec and
	// the pace of the download.
	Join JoinConfig
	// Lag says what happens to a player that falls behind.
	Lag LagConfig
	// Desync says how state hashes are checked and what a desync costs.
	Desync DesyncConfig
	// Save says where and how often the session is saved (default: not).
	Save SaveConfig
	// Record says whether and where the session is recorded, to be
	// replayed and checked later (default: not).
	Record RecordConfig
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
	// Reach, if set, says how the host is reached from the internet (its
	// router's port mapping), for the status query's version 2 reply;
	// unset, that reply says unknown. It is called from the status
	// query's goroutine.
	Reach func() status.Reach
	// Samples says how often the session is sampled for the status
	// page's charts (Server.Samples), and how many samples are kept.
	Samples SampleConfig
}

// SampleConfig says how often the session keeps a Sample (tick rate,
// bytes sent, players' latency) and how many: by default one every 5 s
// for 30 min.
type SampleConfig struct {
	// Every is the interval between two samples (default 5 s; at least
	// 10 ms).
	Every time.Duration
	// Keep is how many samples are kept, the oldest dropped first
	// (default 360; at most MaxSamples).
	Keep int
}

// MaxSamples bounds SampleConfig.Keep.
const MaxSamples = 10000

// LimitConfig caps the session's players and what one client may send or
// have queued.
type LimitConfig struct {
	// MaxPlayers caps the players online (default 8).
	MaxPlayers int
	// MaxSpectators caps the spectators online, counted apart from players
	// (default 4; -1 for none).
	MaxSpectators int
	// HandshakeMaxFrame bounds a frame read from a client before it is
	// admitted (default 80 KiB: room for a Client_Defs of
	// wire.MaxDatabases databases); MaxFrame applies afterwards.
	HandshakeMaxFrame int
	// MaxFrame bounds a frame read from a client (default room for a
	// command of wire.MaxClientCommandPayload).
	MaxFrame int
	// MaxCommandPayload bounds a command's payload (default and most
	// wire.MaxCommandPayload, 64 KiB); a bigger one is refused with a
	// notice and the player stays.
	MaxCommandPayload int
	// SendQueue is the per-client cap on queued small packets (default
	// 1024, 17 s of ticks at 60/s); a client that lets it fill is
	// disconnected.
	SendQueue int
	// SendQueueBytes caps the bytes of small packets waiting to be sent to
	// one client (default 8 MiB; the world download is streamed apart);
	// a client that lets more pile up is disconnected as too slow.
	SendQueueBytes int64
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
}

// TimeoutConfig holds the deadline of each phase of a connection, from
// its first byte to its rejoin.
type TimeoutConfig struct {
	// Handshake bounds connect to DefsOK, clock sync included (default
	// 10 s).
	Handshake time.Duration
	// Username bounds DefsOK to a usable username (default 10 s).
	Username time.Duration
	// DownloadStall is how long a download may go without the client
	// acknowledging progress (default 30 s).
	DownloadStall time.Duration
	// CatchUp bounds the end of the download to WorldReady (default
	// 2 min).
	CatchUp time.Duration
	// Write bounds one frame write (default 15 s).
	Write time.Duration
	// KeepaliveEvery is how often admitted clients get a keepalive
	// (default 1 s).
	KeepaliveEvery time.Duration
	// Idle drops an admitted client the host has heard nothing from for
	// this long (default 30 s), with reason Timeout.
	Idle time.Duration
	// RejoinGrace is how long after leaving a player may rejoin as itself
	// with its session token (default 5 min).
	RejoinGrace time.Duration
}

// AdmissionConfig guards admission: who may join, and how much a
// connection that is not yet admitted may cost the host.
type AdmissionConfig struct {
	// Password, if set, is required of every joiner through a
	// challenge-response; it never crosses the wire.
	Password []byte
	// TLS, if set, makes the game port speak TLS only (1.3 or later):
	// each connection's TLS handshake runs under Timeouts.Handshake
	// before anything else (package tlsid makes a self-signed identity).
	// Nil speaks the plain protocol.
	TLS *tls.Config
	// BanFile, if set, is where the ban list is kept (the data folder's
	// BansFileName); every change rewrites it atomically and it is read
	// at New, so bans survive restarts. Empty keeps bans in memory.
	BanFile string
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
}

// MinUploadRate is the lowest Config.Join.MaxUploadRate, in bytes per
// second.
const MinUploadRate = 1 << 10

// JoinConfig says how a joiner gets the world: the join points it is sent,
// their codec, and how slow and how far ahead its download may run.
type JoinConfig struct {
	// MinDownloadRate is the slowest average download, in bytes per
	// second, a joiner may take: the whole world must be acknowledged
	// within Timeouts.DownloadStall plus its size at this rate, or the
	// joiner is dropped with reason Timeout and its slot freed (default
	// 16 KiB/s; -1 for no minimum). A client that acknowledges a byte now
	// and then cannot hold a slot.
	MinDownloadRate float64
	// DownloadWindow is how far, in bytes, the world download may run
	// ahead of the joiner's acknowledgements (default 2 MiB; -1 for no
	// limit). It bounds what a connection that drops mid-download wastes:
	// bytes written but never received are sent again on the retry. Under
	// the share policy of upload slots (SlotShareWindow) it is at most
	// half a second of a slot's share, and at least 256 KiB.
	DownloadWindow int64
	// MaxUploadRate caps the bytes per second of every world transfer
	// together (joins and repairs), not per joiner, so a friend's download
	// leaves room on a narrow uplink for the players' ticks and commands,
	// which never wait for it (default -1: no cap; at least MinUploadRate).
	MaxUploadRate float64
	// MaxUploadSlots is how many joins' worlds are sent at once; the next
	// joiners wait, first come first, and are told their place in line
	// (default -1: no limit).
	MaxUploadSlots int
	// SlotShareWindow is what a slot is measured over when both
	// MaxUploadRate and MaxUploadSlots are set: a slot is a share of the
	// rate (the rate divided by the slots), and a join that acknowledges
	// less than a quarter of its share over this window while another
	// join waits yields its slot. Its download pauses where it is, it is
	// told so with a queued notice, and it waits behind the joins that
	// have not had their turn yet and those that yielded before it; its
	// next turn goes on where it stopped, and the time it waited counts
	// toward none of its download deadlines. With no one waiting a slow
	// join keeps its slot (default 3 s, at least 100 ms; negative: a slot
	// is kept until the download ends).
	SlotShareWindow time.Duration
	// JoinPointMaxAge is how long a join point is reused for later joiners
	// before a new one is cut (default 10 s).
	JoinPointMaxAge time.Duration
	// LazyJoinPoints builds a join point only when a joiner needs one. By
	// default the host keeps one built in the background (at most ~5% of a
	// core), so joiners do not wait for compression.
	LazyJoinPoints bool
	// Compression is the codec of join points, repairs and saves, with
	// an optional level in the codec's own numbering: "zstd" (the
	// default), "gzip", "zstd:10" (snapshot.ParseCompression). Without a
	// level the codec's default level is used. A joiner that does not read
	// the codec (protocol 3) is sent gzip at its default level.
	Compression string
	// RejoinWindow is how long the host keeps the commands it stamped, so
	// that a player who dropped and still holds its world rejoins by
	// replaying the ones it missed instead of downloading the world
	// (docs/protocol.md, section 6.6; default 10 min, twice the default
	// RejoinGrace; negative: keep none, every rejoin downloads). At 100
	// commands a second a minute of colony's commands takes about 0.5 MiB.
	RejoinWindow time.Duration
	// RejoinWindowBytes bounds the memory of the rejoin window, payloads
	// and 64 bytes per command (default 64 MiB): past it the oldest ticks'
	// commands go before RejoinWindow has passed.
	RejoinWindowBytes int64
}

// LagConfig says what happens when a playing client falls behind, and how
// long a player dropped for lagging or desyncs stays out.
type LagConfig struct {
	// Policy says what happens when a playing client falls more than
	// MaxLag ticks behind the host (default LagWait).
	Policy LagPolicy
	// MaxLag is how far behind, in ticks, a playing client may fall
	// (default 120, two seconds at 60 ticks/s). Under LagWait the host
	// runs at half speed past MaxLag/2 and holds time past MaxLag. A
	// joiner still catching up after its WorldReady (for up to
	// Timeouts.CatchUp), a player not heard from lately (three quarters of
	// the time MaxLag takes, between 1.5 and 3 keepalives) and
	// one whose connection is closing count for neither policy.
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
}

// DesyncConfig says how often clients' state hashes are checked against
// the host's, and what a player that desyncs, or cannot be checked, costs.
type DesyncConfig struct {
	// HashEvery is the interval in ticks at which every client reports
	// its state hashes and the host compares them with its own (default
	// lockstep.DefaultHashEvery, 60; -1 turns desync detection off).
	HashEvery int
	// HashWindow is how many ticks back the host keeps its own hashes: a
	// report for an older tick is refused (default 1800, 30 s at 60
	// ticks/s; left at 0 it is at least twice Lag.MaxLag and four
	// HashEvery intervals).
	HashWindow uint64
	// Dir, if set, is the folder each desync report is written to
	// (package desync); empty writes none (the log still has a line).
	Dir string
	// Limit is how many desyncs one player may have within Window,
	// counted over its rejoins (same session token); one more drops it
	// with reason Desync (defaults 3 and 10 min).
	Limit  int
	Window time.Duration
	// ResyncTimeout bounds a repair, from detection to matching hashes
	// (default 2 min); past it the player is dropped with reason Desync.
	ResyncTimeout time.Duration
	// DropUnverified, if above 0, drops with reason Desync a playing
	// client whose state the host cannot check: one that has reported no
	// state hashes for DropUnverified intervals (HashEvery ticks each)
	// past Lag.MaxLag, counted from its WorldReady or its last report
	// (see unverifiedAfter). -1, the default, never drops one: such a
	// player is only marked unverified (Overview, metrics).
	DropUnverified int
}

// DefaultConfig is the configuration a zero Config stands for, with every
// default filled in: the one place the defaults are written. Fields whose
// default is "none" (Password, TLS, BanFile, Desync.Dir, Save.Path, the
// hooks) are left empty.
func DefaultConfig() Config {
	return Config{
		GameName: "lockhost colony",
		TickRate: 60,
		Factions: roster.FactionsShared,
		Limits: LimitConfig{
			MaxPlayers:        8,
			MaxSpectators:     4,
			HandshakeMaxFrame: 80 << 10,
			MaxFrame:          wire.MaxClientCommandPayload + 4096,
			MaxCommandPayload: wire.MaxCommandPayload,
			SendQueue:         1024,
			SendQueueBytes:    8 << 20,
			CommandRate:       100,
			CommandBurst:      200,
			ChatRate:          1,
			ChatBurst:         5,
		},
		Timeouts: TimeoutConfig{
			Handshake:      10 * time.Second,
			Username:       10 * time.Second,
			DownloadStall:  30 * time.Second,
			CatchUp:        2 * time.Minute,
			Write:          15 * time.Second,
			KeepaliveEvery: time.Second,
			Idle:           30 * time.Second,
			RejoinGrace:    5 * time.Minute,
		},
		Admission: defaultAdmission(),
		Join: JoinConfig{
			MinDownloadRate:   16 << 10,
			DownloadWindow:    2 << 20,
			MaxUploadRate:     -1,
			MaxUploadSlots:    -1,
			SlotShareWindow:   3 * time.Second,
			JoinPointMaxAge:   10 * time.Second,
			RejoinWindow:      10 * time.Minute,
			RejoinWindowBytes: 64 << 20,
			Compression:       snapshot.Zstd.String(),
		},
		Lag: LagConfig{
			Policy:       LagWait,
			MaxLag:       120,
			MaxHold:      time.Minute,
			HoldWindow:   10 * time.Minute,
			DropCooldown: 2 * time.Minute,
		},
		Desync: DesyncConfig{
			HashEvery:      lockstep.DefaultHashEvery,
			HashWindow:     1800,
			Limit:          3,
			Window:         10 * time.Minute,
			ResyncTimeout:  2 * time.Minute,
			DropUnverified: -1,
		},
		Save: SaveConfig{
			Every: 5 * time.Minute,
			Keep:  5,
			Write: saves.Write,
		},
		Samples: SampleConfig{Every: 5 * time.Second, Keep: 360},
		Record:  defaultRecord(),
		Relay: RelayConfig{
			UploadLimit:   wire.DefaultUploadLimit,
			UploadWait:    20 * time.Second,
			WorldRawLimit: 1 << 30,
			GameName:      "lockhost relay",
		},
		Logger: slog.Default(),
	}
}

// defaultAdmission is DefaultConfig's admission: rates, pending slots
// and the password's guess budget.
func defaultAdmission() AdmissionConfig {
	return AdmissionConfig{
		ClockWindow:           50 * time.Millisecond,
		ClockRetries:          32,
		ConnRate:              5,
		ConnBurst:             10,
		MaxPending:            64,
		MaxPendingPerAddr:     4,
		MaxPendingPerPrefix:   16,
		PasswordRate:          0.5,
		PasswordBurst:         10,
		PasswordRateAll:       5,
		PasswordBurstAll:      20,
		PasswordPuzzleMaxBits: 24,
		RefusalLogEvery:       10 * time.Second,
	}
}

// Defaults returns c with every unset (zero) field taken from
// DefaultConfig, and the -1 of a count that can be none made 0.
// Desync.HashWindow, when unset, is at least twice Lag.MaxLag and four
// Desync.HashEvery intervals.
func (c Config) Defaults() Config {
	d := DefaultConfig()
	deriveWindow := c.Desync.HashWindow == 0
	fillZeros(reflect.ValueOf(&c).Elem(), reflect.ValueOf(d))
	if c.Limits.MaxSpectators == -1 {
		c.Limits.MaxSpectators = 0
	}
	if c.Desync.HashEvery == -1 {
		c.Desync.HashEvery = 0
	}
	if deriveWindow {
		c.Desync.HashWindow = max(d.Desync.HashWindow, 2*c.Lag.MaxLag, 4*uint64(c.Desync.HashEvery))
	}
	return c
}

// fillZeros sets every field of dst (a settable struct) that holds its
// type's zero value to the same field of def, looking into nested
// structs field by field.
func fillZeros(dst, def reflect.Value) {
	for i := range dst.NumField() {
		f, d := dst.Field(i), def.Field(i)
		switch {
		case !f.CanSet():
		case f.Kind() == reflect.Struct:
			fillZeros(f, d)
		case f.IsZero():
			f.Set(d)
		}
	}
}

// compression is the configured codec and level (Join.Compression); gzip
// at its default level when it names none.
func (c Config) compression() snapshot.Compression {
	comp, err := snapshot.ParseCompression(c.Join.Compression)
	if err != nil {
		return snapshot.Compression{}
	}
	return comp
}

// Validate reports settings that cannot work.
func (c Config) Validate() error {
	var errs []error
	errs = append(errs, c.Limits.validate()...)
	errs = append(errs, c.validateTimes()...)
	errs = append(errs, c.Admission.validate()...)
	errs = append(errs, c.Desync.validate()...)
	if c.TickRate < 1 || c.TickRate > 1000 {
		errs = append(errs, fmt.Errorf("tick rate %d outside 1..1000", c.TickRate))
	}
	if c.Join.Compression != "" {
		if _, err := snapshot.ParseCompression(c.Join.Compression); err != nil {
			errs = append(errs, err)
		}
	}
	if c.Join.MinDownloadRate != -1 && c.Join.MinDownloadRate <= 0 {
		errs = append(errs, fmt.Errorf("minimum download rate %v bytes/s: must be positive (-1 for none)", c.Join.MinDownloadRate))
	}
	if r := c.Join.MaxUploadRate; r != -1 && r < MinUploadRate {
		errs = append(errs, fmt.Errorf("upload rate %v bytes/s: at least %d (-1 for no cap)", r, MinUploadRate))
	}
	if n := c.Join.MaxUploadSlots; n != -1 && n < 1 {
		errs = append(errs, fmt.Errorf("upload slots %d: at least 1 (-1 for no limit)", n))
	}
	if w := c.Join.SlotShareWindow; w >= 0 && w < 100*time.Millisecond {
		errs = append(errs, fmt.Errorf("slot share window %v: at least 100ms (negative for none)", w))
	}
	if c.Lag.Policy > LagDrop {
		errs = append(errs, fmt.Errorf("unknown lag policy %d", c.Lag.Policy))
	}
	if c.Save.Keep < 1 {
		errs = append(errs, fmt.Errorf("autosaves kept %d: keep at least one", c.Save.Keep))
	}
	if c.Samples.Every < 10*time.Millisecond || c.Samples.Keep < 1 || c.Samples.Keep > MaxSamples {
		errs = append(errs, fmt.Errorf("samples every %v, %d kept: want at least 10ms, and 1..%d", c.Samples.Every, c.Samples.Keep, MaxSamples))
	}
	if c.Factions > roster.FactionsPerPlayer {
		errs = append(errs, fmt.Errorf("unknown faction mode %d", c.Factions))
	}
	if len(c.GameName) > 64 {
		errs = append(errs, errors.New("game name longer than 64 bytes"))
	}
	return errors.Join(errs...)
}

// validate reports the limits that cannot work.
func (l LimitConfig) validate() []error {
	var errs []error
	if l.MaxPlayers < 1 || l.MaxPlayers > wire.MaxPlayers {
		errs = append(errs, fmt.Errorf("max players %d outside 1..%d", l.MaxPlayers, wire.MaxPlayers))
	}
	if l.MaxSpectators < 0 || l.MaxSpectators > wire.MaxPlayers {
		errs = append(errs, fmt.Errorf("max spectators %d outside 0..%d", l.MaxSpectators, wire.MaxPlayers))
	}
	if l.MaxPlayers+l.MaxSpectators > wire.MaxPlayers {
		errs = append(errs, fmt.Errorf("players plus spectators over %d", wire.MaxPlayers))
	}
	if l.MaxCommandPayload < 0 || l.MaxCommandPayload > wire.MaxCommandPayload {
		errs = append(errs, fmt.Errorf("max command payload %d outside 0..%d", l.MaxCommandPayload, wire.MaxCommandPayload))
	}
	if l.ChatRate <= 0 || l.ChatBurst < 1 {
		errs = append(errs, fmt.Errorf("chat rate %v/s with burst %d: both must be positive", l.ChatRate, l.ChatBurst))
	}
	if l.CommandRate <= 0 || l.CommandBurst < 1 {
		errs = append(errs, fmt.Errorf("command rate %v/s with burst %d: both must be positive", l.CommandRate, l.CommandBurst))
	}
	if l.MaxFrame < 1024 || l.MaxFrame > wire.DefaultMaxFrame {
		errs = append(errs, fmt.Errorf("max frame %d outside 1024..%d", l.MaxFrame, wire.DefaultMaxFrame))
	}
	if l.HandshakeMaxFrame < 1024 || l.HandshakeMaxFrame > l.MaxFrame {
		errs = append(errs, fmt.Errorf("handshake max frame %d outside 1024..%d (the max frame)", l.HandshakeMaxFrame, l.MaxFrame))
	}
	if l.SendQueue < 16 {
		errs = append(errs, fmt.Errorf("send queue %d below 16", l.SendQueue))
	}
	return errs
}

// validateTimes reports the timeouts and intervals that cannot work.
func (c Config) validateTimes() []error {
	t, a := c.Timeouts, c.Admission
	var errs []error
	for _, dur := range []time.Duration{t.Handshake, t.Username, t.DownloadStall,
		t.CatchUp, t.Write, c.Join.JoinPointMaxAge, a.ClockWindow, a.RefusalLogEvery} {
		if dur < 0 {
			errs = append(errs, errors.New("timeouts must not be negative"))
			break
		}
	}
	if t.KeepaliveEvery <= 0 || t.Idle < 2*t.KeepaliveEvery {
		errs = append(errs, fmt.Errorf("timeout %v must be at least two keepalive intervals (%v)", t.Idle, t.KeepaliveEvery))
	}
	return errs
}

// validate reports the admission settings that cannot work.
func (a AdmissionConfig) validate() []error {
	var errs []error
	if a.ClockRetries < 1 || a.ClockRetries > 255 {
		errs = append(errs, fmt.Errorf("clock retries %d outside 1..255", a.ClockRetries))
	}
	if a.ConnRate != -1 && (a.ConnRate <= 0 || a.ConnBurst < 1) {
		errs = append(errs, fmt.Errorf("connection rate %v/s with burst %d: both must be positive (rate -1 disables)", a.ConnRate, a.ConnBurst))
	}
	if a.PasswordRate != -1 && (a.PasswordRate <= 0 || a.PasswordBurst < 1 || a.PasswordRateAll <= 0 || a.PasswordBurstAll < 1) {
		errs = append(errs, fmt.Errorf("password attempt rates %v/s (burst %d) per address and %v/s (burst %d) in all: all must be positive (rate -1 disables)",
			a.PasswordRate, a.PasswordBurst, a.PasswordRateAll, a.PasswordBurstAll))
	}
	if a.MaxPending < -1 || a.MaxPendingPerAddr < -1 || a.MaxPendingPerPrefix < -1 {
		errs = append(errs, fmt.Errorf("pending connection caps %d, %d per address and %d per network: use a count, or -1 for none",
			a.MaxPending, a.MaxPendingPerAddr, a.MaxPendingPerPrefix))
	}
	if a.PasswordPuzzleMaxBits != -1 && (a.PasswordPuzzleMaxBits < gate.PuzzleBaseBits || a.PasswordPuzzleMaxBits > password.MaxPuzzleBits) {
		errs = append(errs, fmt.Errorf("password puzzle of at most %d bits outside %d..%d (-1 for none)",
			a.PasswordPuzzleMaxBits, gate.PuzzleBaseBits, password.MaxPuzzleBits))
	}
	return errs
}

// validate reports the desync settings that cannot work.
func (d DesyncConfig) validate() []error {
	var errs []error
	if d.DropUnverified < -1 {
		errs = append(errs, fmt.Errorf("drop-unverified %d: use a count of intervals, or -1 for never", d.DropUnverified))
	}
	if d.HashEvery < 0 || d.HashEvery > 1<<20 {
		errs = append(errs, fmt.Errorf("hash interval %d outside 1..%d ticks (or -1 for none)", d.HashEvery, 1<<20))
	}
	if d.HashEvery > 0 && d.HashWindow < uint64(d.HashEvery) {
		errs = append(errs, fmt.Errorf("hash window %d shorter than the hash interval %d", d.HashWindow, d.HashEvery))
	}
	if d.Limit < 1 || d.Window < 0 || d.ResyncTimeout < 0 {
		errs = append(errs, fmt.Errorf("desync limit %d in %v, repair timeout %v: the limit must be at least 1, times not negative", d.Limit, d.Window, d.ResyncTimeout))
	}
	return errs
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

// String is the policy's name, as ParseLagPolicy reads it.
func (p LagPolicy) String() string {
	switch p {
	case LagWait:
		return "wait"
	case LagDrop:
		return "drop"
	}
	return fmt.Sprintf("LagPolicy(%d)", uint8(p))
}

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
