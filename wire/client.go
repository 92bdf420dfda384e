package wire

import (
	"errors"
	"fmt"

	"github.com/lockhost/lockhost/lockstep"
)

// Field limits for client packets.
const (
	// MaxNameBytes bounds a username on the wire; the roster applies the
	// stricter game rule.
	MaxNameBytes = 64
	// MaxProofBytes bounds a password proof.
	MaxProofBytes = 64
	// MaxTypeNameBytes bounds a def database type name.
	MaxTypeNameBytes = 128
)

// MaxCodecs bounds the codecs a Client_Protocol lists.
const MaxCodecs = 16

// ClientProtocol opens the handshake with the client's protocol version
// and, from protocol 4, the codecs it inflates world payload blobs with
// (package snapshot numbers them: 0 gzip, 1 zstd), preferred first. A
// client listing none reads gzip only.
type ClientProtocol struct {
	Protocol uint32  `codec:"v"`
	Codecs   []uint8 `codec:"z,omitempty"`
}

// ID implements Packet.
func (*ClientProtocol) ID() ID { return IDClientProtocol }

// Validate implements Packet.
func (p *ClientProtocol) Validate() error {
	if len(p.Codecs) > MaxCodecs {
		return fmt.Errorf("%d codecs, over the limit of %d", len(p.Codecs), MaxCodecs)
	}
	return nil
}

// DefSummary is one def database as the handshake compares it.
type DefSummary struct {
	Type  string `codec:"t"`
	Count int32  `codec:"c"`
	Hash  uint64 `codec:"h"`
}

// ClientDefs declares the client's def databases.
type ClientDefs struct {
	Databases []DefSummary `codec:"d"`
}

// ID implements Packet.
func (*ClientDefs) ID() ID { return IDClientDefs }

// ErrTooManyDatabases reports a Client_Defs with more than MaxDatabases
// entries.
var ErrTooManyDatabases = fmt.Errorf("more than %d def databases", MaxDatabases)

// Validate implements Packet.
func (p *ClientDefs) Validate() error {
	if len(p.Databases) > MaxDatabases {
		return ErrTooManyDatabases
	}
	for _, d := range p.Databases {
		if len(d.Type) == 0 || len(d.Type) > MaxTypeNameBytes {
			return fmt.Errorf("database type name of %d bytes", len(d.Type))
		}
		if d.Count < 0 {
			return fmt.Errorf("database %q: negative count", d.Type)
		}
	}
	return nil
}

// ClientUsername asks to join under a name, as a player or a spectator.
// An empty name is ignored by the host. PasswordProof answers the host's
// password challenge (see package password); PuzzleNonce solves the
// host's puzzle, when Server_ModList set one (on the password challenge,
// or on a relay host without a password, the arbiter challenge).
type ClientUsername struct {
	Name          string `codec:"n"`
	PasswordProof []byte `codec:"p"`
	PuzzleNonce   uint64 `codec:"w,omitempty"`
	Spectate      bool   `codec:"s"`
	// Token, when set, rejoins as the player the host gave it to: same
	// player ID, name and faction. See Server_Session.
	Token []byte `codec:"k"`
	// Resume, with Token, continues a join whose connection dropped
	// before WorldReady: the world blobs the client already holds, each
	// verified against its hash, by index in the last payload header it
	// got. The host sends only the others. At most MaxResumeBlobs.
	Resume []HeldBlob `codec:"r"`
	// ArbiterProof, sent only to a relay host that set
	// Server_ModList's ArbiterChallenge, proves the arbiter secret: the
	// client asks to be the session's arbiter (docs/protocol.md,
	// section 14). Left out when empty.
	ArbiterProof []byte `codec:"a,omitempty"`
	// Held, with Token, rejoins a player that was past WorldReady from
	// the world it still holds: where its simulation stands and the
	// hash reports it made last. A host that can replay the commands it
	// missed sends those instead of a world (Server_Session's Rejoin);
	// otherwise it says why and sends the world as to any rejoin. Left
	// out when nil: a host that does not know the key ignores it.
	Held *HeldWorld `codec:"h,omitempty"`
	// Made names the maps whose regenerable section the client made
	// from Server_DefsOK's recipes, each with the hash its bytes have:
	// the host may send those maps without it (docs/protocol.md, section
	// 8.6). Left out when empty; at most MaxSections.
	Made []MadeSection `codec:"g,omitempty"`
}

// MaxHeldChecks bounds the hash reports a held-world rejoin names.
const MaxHeldChecks = 16

// HeldWorld is where a rejoining client's simulation stands: at Tick,
// having applied the first Applied commands stamped Tick (those with a
// sequence below it), and the hash reports it sent last, oldest first,
// so the host finds among them the last one it compared and accepted.
type HeldWorld struct {
	Tick    uint64      `codec:"t"`
	Applied uint32      `codec:"a"`
	Checks  []HeldCheck `codec:"c"`
}

// HeldCheck is one hash report a client sent: its tick and world hash.
type HeldCheck struct {
	Tick  uint64 `codec:"t"`
	World uint64 `codec:"w"`
}

// MadeSection is one map's section a client made: the map and the XXH64
// of the bytes it made.
type MadeSection struct {
	MapID int32  `codec:"i"`
	Hash  uint64 `codec:"h"`
}

// MaxResumeBlobs bounds the blobs a resume may name: the world blob and
// one per map.
const MaxResumeBlobs = 1 + lockstep.MaxMaps

// HeldBlob is one world blob a resuming client holds: its index in the
// payload header (0 the world, 1+i map i) and its xxhash64.
type HeldBlob struct {
	Index uint32 `codec:"i"`
	Hash  uint64 `codec:"h"`
}

// ID implements Packet.
func (*ClientUsername) ID() ID { return IDClientUsername }

// Validate implements Packet.
func (p *ClientUsername) Validate() error {
	if len(p.Name) > MaxNameBytes {
		return fmt.Errorf("name of %d bytes", len(p.Name))
	}
	if len(p.PasswordProof) > MaxProofBytes {
		return fmt.Errorf("password proof of %d bytes", len(p.PasswordProof))
	}
	if len(p.ArbiterProof) > MaxProofBytes {
		return fmt.Errorf("arbiter proof of %d bytes", len(p.ArbiterProof))
	}
	if len(p.ArbiterProof) > 0 && p.Spectate {
		return errors.New("an arbiter cannot spectate")
	}
	if len(p.Token) != 0 && len(p.Token) != TokenSize {
		return fmt.Errorf("session token of %d bytes", len(p.Token))
	}
	if len(p.Resume) > MaxResumeBlobs {
		return fmt.Errorf("resume names %d blobs, over %d", len(p.Resume), MaxResumeBlobs)
	}
	if len(p.Resume) > 0 && len(p.Token) == 0 {
		return errors.New("resume without a session token")
	}
	if len(p.Made) > MaxSections {
		return fmt.Errorf("%d made sections exceeds %d", len(p.Made), MaxSections)
	}
	for _, b := range p.Resume {
		if b.Index >= MaxResumeBlobs {
			return fmt.Errorf("resume names blob %d, over %d", b.Index, MaxResumeBlobs-1)
		}
	}
	if p.Held != nil {
		if len(p.Token) == 0 {
			return errors.New("a held world without a session token")
		}
		if len(p.Held.Checks) > MaxHeldChecks {
			return fmt.Errorf("held world names %d hash reports, over %d", len(p.Held.Checks), MaxHeldChecks)
		}
	}
	return nil
}

// TokenSize is the size of a session token: 128 random bits.
const TokenSize = 16

// ClientWorldReady says the client has loaded the world and caught up to
// Tick, where its world hash was WorldHash.
type ClientWorldReady struct {
	Tick      uint64 `codec:"t"`
	WorldHash uint64 `codec:"h"`
}

// ID implements Packet.
func (*ClientWorldReady) ID() ID { return IDClientWorldReady }

// Validate implements Packet.
func (*ClientWorldReady) Validate() error { return nil }

// ClientCommand asks the host to run a command.
type ClientCommand struct {
	MapID   int32  `codec:"m"`
	Kind    uint16 `codec:"k"`
	Payload []byte `codec:"d"`
}

// ID implements Packet.
func (*ClientCommand) ID() ID { return IDClientCommand }

// MaxClientCommandPayload is the largest payload a Client_Command may carry
// on the wire. It is above MaxCommandPayload so that a host can refuse an
// oversized command politely, with a notice, and keep the player.
const MaxClientCommandPayload = 4 * MaxCommandPayload

func (p *ClientCommand) bulk() (*[]byte, int) { return &p.Payload, MaxCommandPayload }

// Validate implements Packet.
func (p *ClientCommand) Validate() error {
	if len(p.Payload) > MaxClientCommandPayload {
		return fmt.Errorf("command payload of %d bytes exceeds %d", len(p.Payload), MaxClientCommandPayload)
	}
	return nil
}

// ClientTickAck reports the tick the client has simulated up to. The host's
// lag policy works from these.
type ClientTickAck struct {
	Tick uint64 `codec:"t"`
}

// ID implements Packet.
func (*ClientTickAck) ID() ID { return IDClientTickAck }

// Validate implements Packet.
func (*ClientTickAck) Validate() error { return nil }

// ClientClock echoes a Server_Clock's nonce with the client's clock, in
// microseconds since the Unix epoch.
type ClientClock struct {
	Nonce      uint32 `codec:"n"`
	ClientTime int64  `codec:"c"`
}

// ID implements Packet.
func (*ClientClock) ID() ID { return IDClientClock }

// Validate implements Packet.
func (*ClientClock) Validate() error { return nil }

// ClientAck acknowledges how many bytes of the world payload arrived. The
// host measures the download, and its deadline, by these.
type ClientAck struct {
	Received uint64 `codec:"r"`
}

// ID implements Packet.
func (*ClientAck) ID() ID { return IDClientAck }

// Validate implements Packet.
func (*ClientAck) Validate() error { return nil }

// ClientKeepalive echoes a Server_Keepalive, unchanged, at once.
type ClientKeepalive struct {
	Seq      uint32 `codec:"q"`
	HostTime int64  `codec:"h"`
}

// ID implements Packet.
func (*ClientKeepalive) ID() ID { return IDClientKeepalive }

// Validate implements Packet.
func (*ClientKeepalive) Validate() error { return nil }

// Limits of a Client_Hashes report.
const (
	// MaxHashMaps bounds the maps in one report: lockstep.MaxMaps, the
	// most maps a world may have.
	MaxHashMaps = lockstep.MaxMaps
)

// MapHash is one map's state hash in a Client_Hashes report, with the
// hashes of its parts when the game can split it (lockstep.MapDigester).
type MapHash struct {
	MapID int32    `codec:"m"`
	Hash  uint64   `codec:"h"`
	Parts []uint64 `codec:"p"`
}

// ClientHashes reports the client's state hashes at Tick: the world hash
// and each map's, taken right after the step that reached Tick, before any
// command stamped Tick is applied. Tick is a multiple of the HashEvery the
// host announced in Server_Session, and each report's tick is above the
// last one's.
type ClientHashes struct {
	Tick  uint64    `codec:"t"`
	World uint64    `codec:"w"`
	Maps  []MapHash `codec:"m"`
}

// ID implements Packet.
func (*ClientHashes) ID() ID { return IDClientHashes }

// Validate implements Packet.
func (p *ClientHashes) Validate() error {
	if len(p.Maps) > MaxHashMaps {
		return fmt.Errorf("%d map hashes exceeds %d", len(p.Maps), MaxHashMaps)
	}
	for _, m := range p.Maps {
		if len(m.Parts) > lockstep.MaxMapParts {
			return fmt.Errorf("map %d: %d part hashes exceeds %d", m.MapID, len(m.Parts), lockstep.MaxMapParts)
		}
	}
	return nil
}

// ClientResynced tells the host a repair (Server_Resync) went in: the
// client's world hash at the repair's Tick, right after the swap. The host
// compares it with its own at the cut, so a repair is confirmed at once
// rather than at the next checkpoint.
type ClientResynced struct {
	Tick  uint64 `codec:"t"`
	World uint64 `codec:"w"`
}

// ID implements Packet.
func (*ClientResynced) ID() ID { return IDClientResynced }

// Validate implements Packet.
func (*ClientResynced) Validate() error { return nil }
