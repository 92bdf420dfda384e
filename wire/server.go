package wire

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/lockhost/lockhost/lockstep"
)

// Field limits for server packets.
const (
	// MaxMods bounds the mod list.
	MaxMods = 4096
	// MaxPlayers bounds a player list.
	MaxPlayers = 1024
	// MaxGameStringBytes bounds Server_ModList's game version and
	// Server_DefsOK's game name (the UDP status reply's bound too).
	MaxGameStringBytes = 64
	// MaxModIDBytes bounds one mod package ID of Server_ModList.
	MaxModIDBytes = 256
	// MaxTickCommands bounds the commands of one Server_Tick.
	MaxTickCommands = 4096
	// MaxTextBytes bounds free text (notices, disconnect messages).
	MaxTextBytes = 4096
	// MaxDetailBytes bounds the detail blob of a disconnect.
	MaxDetailBytes = 512 << 10
)

// ServerModList answers a matching protocol with the host's content:
// its game version, its mods, a password challenge when the session has
// a password, the summaries of its def databases (sorted by type), so a
// client can see what the host expects before it declares its own, and
// PuzzleBits: when not 0, the difficulty of the proof of work the client
// must solve on PasswordChallenge before its password is checked (on
// ArbiterChallenge, before its arbiter proof is, when the session has no
// password: see package password and the spec); at most MaxPuzzleBits.
type ServerModList struct {
	GameVersion       string       `codec:"v"`
	Mods              []string     `codec:"m"`
	PasswordChallenge []byte       `codec:"c"`
	Databases         []DefSummary `codec:"d"`
	PuzzleBits        uint8        `codec:"b,omitempty"`
	// ArbiterChallenge is sent by a relay host only: 32 random bytes a
	// client proves the arbiter secret over (docs/protocol.md, section
	// 14). Left out when empty.
	ArbiterChallenge []byte `codec:"a,omitempty"`
	// ContentHash and ContentSize offer the host's content manifest
	// (docs/protocol.md, section 17.4): its SHA-256 and its size in
	// bytes. Both are left out when the host does not share its content.
	ContentHash []byte `codec:"s,omitempty"`
	ContentSize uint32 `codec:"l,omitempty"`
}

// MaxPuzzleBits bounds a password puzzle's difficulty.
const MaxPuzzleBits = 32

// ID implements Packet.
func (*ServerModList) ID() ID { return IDServerModList }

// Validate implements Packet.
func (p *ServerModList) Validate() error {
	if len(p.GameVersion) > MaxGameStringBytes {
		return fmt.Errorf("game version of %d bytes exceeds %d", len(p.GameVersion), MaxGameStringBytes)
	}
	if len(p.Mods) > MaxMods {
		return fmt.Errorf("%d mods exceeds %d", len(p.Mods), MaxMods)
	}
	for _, m := range p.Mods {
		if len(m) > MaxModIDBytes {
			return fmt.Errorf("mod ID of %d bytes exceeds %d", len(m), MaxModIDBytes)
		}
	}
	if len(p.PasswordChallenge) > MaxProofBytes {
		return fmt.Errorf("password challenge of %d bytes", len(p.PasswordChallenge))
	}
	if len(p.ArbiterChallenge) > MaxProofBytes {
		return fmt.Errorf("arbiter challenge of %d bytes", len(p.ArbiterChallenge))
	}
	if (len(p.ContentHash) != 0 && len(p.ContentHash) != ContentHashSize) || (len(p.ContentHash) == 0) != (p.ContentSize == 0) ||
		p.ContentSize > MaxContentManifest {
		return fmt.Errorf("content offer of a %d-byte hash and %d bytes", len(p.ContentHash), p.ContentSize)
	}
	if len(p.Databases) > MaxDatabases {
		return ErrTooManyDatabases
	}
	for _, d := range p.Databases {
		if len(d.Type) == 0 || len(d.Type) > MaxTypeNameBytes {
			return fmt.Errorf("database type name of %d bytes", len(d.Type))
		}
	}
	if p.PuzzleBits > MaxPuzzleBits {
		return fmt.Errorf("password puzzle of %d bits, over %d", p.PuzzleBits, MaxPuzzleBits)
	}
	if p.PuzzleBits > 0 && len(p.PasswordChallenge) == 0 && len(p.ArbiterChallenge) == 0 {
		return errors.New("password puzzle without a challenge")
	}
	return nil
}

// ServerDefsOK accepts the client's defs.
type ServerDefsOK struct {
	GameName string `codec:"g"`
	PlayerID int32  `codec:"p"`
	// Sections are the maps whose regenerable section (docs/protocol.md,
	// section 8.6) a client that runs the game may make itself, then
	// name in Client_Username's Made. Left out when empty; at most
	// MaxSections.
	Sections []SectionRecipe `codec:"r,omitempty"`
}

// MaxSections bounds the sections Server_DefsOK and Client_Username
// name: one per map.
const MaxSections = lockstep.MaxMaps

// SectionRecipe is one map's regenerable section: its map, the XXH64 and
// length of its bytes and the game's recipe to make them (at most
// lockstep.MaxRecipe bytes).
type SectionRecipe struct {
	MapID  int32  `codec:"i"`
	Hash   uint64 `codec:"h"`
	Length uint64 `codec:"n"`
	Recipe []byte `codec:"d"`
}

// ID implements Packet.
func (*ServerDefsOK) ID() ID { return IDServerDefsOK }

// Validate implements Packet.
func (p *ServerDefsOK) Validate() error {
	if len(p.GameName) > MaxGameStringBytes {
		return fmt.Errorf("game name of %d bytes exceeds %d", len(p.GameName), MaxGameStringBytes)
	}
	if len(p.Sections) > MaxSections {
		return fmt.Errorf("%d sections exceeds %d", len(p.Sections), MaxSections)
	}
	for _, s := range p.Sections {
		if len(s.Recipe) > lockstep.MaxRecipe {
			return fmt.Errorf("map %d: a section recipe of %d bytes exceeds %d", s.MapID, len(s.Recipe), lockstep.MaxRecipe)
		}
	}
	return nil
}

// ServerWorldData is one chunk of the world payload (docs/protocol.md,
// section 8).
type ServerWorldData struct {
	Offset uint64 `codec:"o"`
	Total  uint64 `codec:"t"`
	Data   []byte `codec:"d"`
}

// ID implements Packet.
func (*ServerWorldData) ID() ID { return IDServerWorldData }

func (p *ServerWorldData) bulk() (*[]byte, int) { return &p.Data, MaxChunkData }

// Validate implements Packet.
func (p *ServerWorldData) Validate() error {
	if len(p.Data) > MaxChunkData {
		return fmt.Errorf("chunk of %d bytes exceeds %d", len(p.Data), MaxChunkData)
	}
	if p.Offset > p.Total || uint64(len(p.Data)) > p.Total-p.Offset {
		return fmt.Errorf("chunk %d+%d runs past total %d", p.Offset, len(p.Data), p.Total)
	}
	return nil
}

// PlayerStatus is where a player is in the session.
type PlayerStatus uint8

// Player statuses.
const (
	StatusJoining     PlayerStatus = 0
	StatusDownloading PlayerStatus = 1
	StatusPlaying     PlayerStatus = 2
	StatusSpectating  PlayerStatus = 3
	// StatusDesynced is a player whose state diverged from the host's and
	// is being repaired (a Server_Resync is under way).
	StatusDesynced PlayerStatus = 4
)

// String names the status.
func (s PlayerStatus) String() string {
	switch s {
	case StatusJoining:
		return "joining"
	case StatusDownloading:
		return "downloading"
	case StatusPlaying:
		return "playing"
	case StatusSpectating:
		return "spectating"
	case StatusDesynced:
		return "desynced"
	}
	return fmt.Sprintf("status(%d)", uint8(s))
}

// PlayerInfo is one row of the player list. Faction is 0 for spectators;
// LatencyMs is the round trip the host last measured (0 before any).
type PlayerInfo struct {
	ID        int32        `codec:"i"`
	Name      string       `codec:"n"`
	Faction   int32        `codec:"f"`
	Status    PlayerStatus `codec:"s"`
	Spectator bool         `codec:"x"`
	LatencyMs int32        `codec:"l"`
}

// PlayerListAction says how a player list applies.
type PlayerListAction uint8

// Player list actions. Only PlayerListFull replaces the list; the others
// are deltas applied to the list the client holds.
const (
	// PlayerListFull replaces the whole list.
	PlayerListFull PlayerListAction = 0
	// PlayerListAdd adds the given players.
	PlayerListAdd PlayerListAction = 1
	// PlayerListRemove removes the players with the given IDs (other
	// fields unused).
	PlayerListRemove PlayerListAction = 2
	// PlayerListStatus sets the status of the given players.
	PlayerListStatus PlayerListAction = 3
	// PlayerListLatencies sets the latency of the given players.
	PlayerListLatencies PlayerListAction = 4
)

// String names the action.
func (a PlayerListAction) String() string {
	switch a {
	case PlayerListFull:
		return "List"
	case PlayerListAdd:
		return "Add"
	case PlayerListRemove:
		return "Remove"
	case PlayerListStatus:
		return "Status"
	case PlayerListLatencies:
		return "Latencies"
	}
	return fmt.Sprintf("action(%d)", uint8(a))
}

// ServerPlayerList carries the player list.
type ServerPlayerList struct {
	Action  PlayerListAction `codec:"a"`
	Players []PlayerInfo     `codec:"p"`
}

// ID implements Packet.
func (*ServerPlayerList) ID() ID { return IDServerPlayerList }

// Validate implements Packet.
func (p *ServerPlayerList) Validate() error {
	if p.Action > PlayerListLatencies {
		return fmt.Errorf("unknown player list action %d", p.Action)
	}
	if len(p.Players) > MaxPlayers {
		return fmt.Errorf("%d players exceeds %d", len(p.Players), MaxPlayers)
	}
	return nil
}

// ServerDisconnect ends the connection with a reason. DefStatuses holds one
// status per database the client declared when Reason is ReasonDefs,
// followed by one "missing" status (4) per host database it left out;
// Detail may carry more (for example the host's def manifest of the
// differing databases).
type ServerDisconnect struct {
	Reason      Reason  `codec:"r"`
	Message     string  `codec:"m"`
	DefStatuses []uint8 `codec:"s"`
	Detail      []byte  `codec:"d"`
}

// ID implements Packet.
func (*ServerDisconnect) ID() ID { return IDServerDisconnect }

// Validate implements Packet.
func (p *ServerDisconnect) Validate() error {
	if len(p.Message) > MaxTextBytes {
		return fmt.Errorf("message of %d bytes", len(p.Message))
	}
	if len(p.DefStatuses) > MaxDatabases {
		return ErrTooManyDatabases
	}
	if len(p.Detail) > MaxDetailBytes {
		return fmt.Errorf("detail of %d bytes", len(p.Detail))
	}
	return nil
}

// NoticeKind classifies a notice.
type NoticeKind uint8

// Notice kinds.
const (
	NoticeInfo           NoticeKind = 0
	NoticeJoined         NoticeKind = 1
	NoticeLeft           NoticeKind = 2
	NoticeFactionOnline  NoticeKind = 3
	NoticeFactionOffline NoticeKind = 4
	// NoticeQueued tells a joiner it waits for an upload slot; Place
	// (and the text) says its place in line.
	NoticeQueued NoticeKind = 5
)

// String names the kind.
func (k NoticeKind) String() string {
	switch k {
	case NoticeInfo:
		return "info"
	case NoticeJoined:
		return "joined"
	case NoticeLeft:
		return "left"
	case NoticeFactionOnline:
		return "faction online"
	case NoticeFactionOffline:
		return "faction offline"
	case NoticeQueued:
		return "queued"
	}
	return fmt.Sprintf("notice(%d)", uint8(k))
}

// ServerNotice is a line of text for players.
type ServerNotice struct {
	Kind NoticeKind `codec:"k"`
	Text string     `codec:"t"`
	// Place is a queued notice's place in line, 1 the next to get an
	// upload slot; 0 (left out) in every other notice.
	Place uint32 `codec:"p,omitempty"`
}

// ID implements Packet.
func (*ServerNotice) ID() ID { return IDServerNotice }

// Validate implements Packet.
func (p *ServerNotice) Validate() error {
	if len(p.Text) > MaxTextBytes {
		return fmt.Errorf("notice of %d bytes", len(p.Text))
	}
	return nil
}

// ServerTick carries the commands stamped with Tick, in the order the host
// applied them, and grants simulation up to Granted (Tick() may reach
// Granted). Speed is the host's current speed multiplier. Each command is
// encoded by lockstep.Command's own codec keys: package lockstep owns a
// command's encoding, which the join point payload shares.
type ServerTick struct {
	Tick     uint64             `codec:"t"`
	Commands []lockstep.Command `codec:"c"`
	Granted  uint64             `codec:"g"`
	Speed    uint8              `codec:"s"`
}

// ID implements Packet.
func (*ServerTick) ID() ID { return IDServerTick }

// Validate implements Packet.
func (p *ServerTick) Validate() error {
	if len(p.Commands) > MaxTickCommands {
		return fmt.Errorf("%d commands exceeds %d", len(p.Commands), MaxTickCommands)
	}
	for _, c := range p.Commands {
		if c.Tick != p.Tick {
			return fmt.Errorf("command stamped %d in tick %d", c.Tick, p.Tick)
		}
		if len(c.Payload) > MaxCommandPayload {
			return fmt.Errorf("command payload of %d bytes", len(c.Payload))
		}
	}
	if p.Granted < p.Tick {
		return fmt.Errorf("grant %d is before tick %d", p.Granted, p.Tick)
	}
	return nil
}

// ServerClock is one round of the clock-sync handshake: the host's clock
// (microseconds since the Unix epoch) when it sent the packet, a fresh
// random nonce the client must echo, the host's current estimate of the
// client's clock offset, and which attempt this is.
type ServerClock struct {
	Nonce    uint32 `codec:"n"`
	HostTime int64  `codec:"h"`
	Delta    int64  `codec:"d"`
	Attempt  uint8  `codec:"a"`
}

// ID implements Packet.
func (*ServerClock) ID() ID { return IDServerClock }

// Validate implements Packet.
func (*ServerClock) Validate() error { return nil }

// AppendWorldDataHeader appends a whole Server_WorldData frame except its
// data: the frame header and the msgpack body up to the data bytes, which
// the caller writes next, unchanged. Sending a chunk this way copies
// nothing; the result decodes exactly like Marshal's.
func AppendWorldDataHeader(dst []byte, offset, total uint64, dataLen int) []byte {
	// Body: fixmap(3) {"o": uint64, "t": uint64, "d": bin32}.
	const bodyHead = 1 + (2 + 9) + (2 + 9) + (2 + 5)
	dst = binary.BigEndian.AppendUint32(dst, uint32(1+bodyHead+dataLen))
	dst = append(dst, byte(IDServerWorldData), 0x83)
	dst = append(dst, 0xa1, 'o', 0xcf)
	dst = binary.BigEndian.AppendUint64(dst, offset)
	dst = append(dst, 0xa1, 't', 0xcf)
	dst = binary.BigEndian.AppendUint64(dst, total)
	dst = append(dst, 0xa1, 'd', 0xc6)
	return binary.BigEndian.AppendUint32(dst, uint32(dataLen))
}

// ServerKeepalive is sent every second or so to every admitted client,
// which echoes it at once: the host measures each round trip and notices
// silent clients; the client notices a silent host.
type ServerKeepalive struct {
	Seq      uint32 `codec:"q"`
	HostTime int64  `codec:"h"` // microseconds since the Unix epoch
}

// ID implements Packet.
func (*ServerKeepalive) ID() ID { return IDServerKeepalive }

// Validate implements Packet.
func (*ServerKeepalive) Validate() error { return nil }

// ServerSession gives a player, on admission, the token to rejoin as
// itself after a dropped connection within the grace period, and its
// lasting player ID (a rejoin gets its old one back).
type ServerSession struct {
	Token    []byte `codec:"k"`
	GraceMs  int64  `codec:"g"`
	PlayerID int32  `codec:"p"` // the player's ID for good: a rejoin gets its old one back
	// HashEvery is the interval in ticks of the client's state-hash
	// reports (Client_Hashes): at every tick that is a multiple of it.
	// Zero means the host wants none.
	HashEvery uint32 `codec:"e"`
	// Rejoin answers a Client_Username's Held: RejoinHeld when the host
	// replays the commands the player missed (no world follows), else the
	// reason it sends the world instead. Left out when 0: no held world
	// was named.
	Rejoin RejoinResult `codec:"r,omitempty"`
	// Granted, with RejoinHeld, is the host's grant where the replay
	// ends, at or before the admission (a replay built for an earlier
	// rejoin from the same position is followed by the ticks since): the
	// replayed ticks end with a grant of it, and the client catches up to
	// it before Client_WorldReady. Left out when 0.
	Granted uint64 `codec:"t,omitempty"`
	// Replay, with RejoinHeld, is the commands the player missed, in the
	// replay layout (AppendReplay, DecodeReplay), compressed as one gzip
	// member or zstd frame (ReplayCodec, 0 gzip, 1 zstd, as package
	// snapshot numbers them). At most MaxReplayBytes, inflating to at most
	// MaxReplayRaw. Left out when empty.
	Replay      []byte `codec:"c,omitempty"`
	ReplayCodec uint8  `codec:"z,omitempty"`
	// Why says in a sentence why a held world was not used. Left out when
	// empty.
	Why string `codec:"m,omitempty"`
}

// ID implements Packet.
func (*ServerSession) ID() ID { return IDServerSession }

// Validate implements Packet.
func (p *ServerSession) Validate() error {
	if len(p.Token) != TokenSize {
		return fmt.Errorf("session token of %d bytes", len(p.Token))
	}
	if len(p.Why) > MaxTextBytes {
		return fmt.Errorf("rejoin reason of %d bytes", len(p.Why))
	}
	if len(p.Replay) > MaxReplayBytes {
		return fmt.Errorf("replay of %d bytes, over %d", len(p.Replay), MaxReplayBytes)
	}
	return nil
}

// ServerResync starts the repair of a desynced client. The host cut the
// state at Tick after applying the first Applied commands stamped Tick;
// the Server_WorldData chunks that follow carry that state as a world
// payload (its own offsets and total, like a join's) holding the listed
// maps, or every map and the world-level state when Full. The client
// simulates up to exactly that point, waits there for the payload, swaps
// the maps in (or reloads the world when Full), and goes on with the ticks
// it kept receiving. It sends no Client_Ack for these chunks.
type ServerResync struct {
	Tick    uint64  `codec:"t"`
	Applied uint32  `codec:"a"`
	Maps    []int32 `codec:"m"`
	Full    bool    `codec:"f"`
}

// ID implements Packet.
func (*ServerResync) ID() ID { return IDServerResync }

// Validate implements Packet.
func (p *ServerResync) Validate() error {
	if len(p.Maps) > MaxHashMaps {
		return fmt.Errorf("%d maps exceeds %d", len(p.Maps), MaxHashMaps)
	}
	if !p.Full && len(p.Maps) == 0 {
		return errors.New("a resync of no maps")
	}
	return nil
}

// DesyncState says what a Server_Desync reports.
type DesyncState uint8

// Desync states.
const (
	// DesyncDetected: the player's hashes at Tick differ from the host's;
	// a repair is under way.
	DesyncDetected DesyncState = 0
	// DesyncRepaired: the player's hashes match the host's again.
	DesyncRepaired DesyncState = 1
	// DesyncDropped: the player kept desyncing and was disconnected.
	DesyncDropped DesyncState = 2
)

// String names the state.
func (s DesyncState) String() string {
	switch s {
	case DesyncDetected:
		return "detected"
	case DesyncRepaired:
		return "repaired"
	case DesyncDropped:
		return "dropped"
	}
	return fmt.Sprintf("desync(%d)", uint8(s))
}

// ServerDesync tells every client about a desync: whose state diverged,
// at which checkpoint tick, in which maps (or the world-level state when
// World), and later that it was repaired (RepairMs after detection) or
// that the player was dropped.
type ServerDesync struct {
	State    DesyncState `codec:"s"`
	PlayerID int32       `codec:"p"`
	Name     string      `codec:"n"`
	Tick     uint64      `codec:"t"`
	Maps     []int32     `codec:"m"`
	World    bool        `codec:"w"`
	RepairMs int64       `codec:"r"`
}

// ID implements Packet.
func (*ServerDesync) ID() ID { return IDServerDesync }

// Validate implements Packet.
func (p *ServerDesync) Validate() error {
	if len(p.Maps) > MaxHashMaps {
		return fmt.Errorf("%d maps exceeds %d", len(p.Maps), MaxHashMaps)
	}
	if len(p.Name) > MaxNameBytes {
		return fmt.Errorf("name of %d bytes", len(p.Name))
	}
	return nil
}
