package wire

import (
	"errors"
	"fmt"
)

// ID identifies a packet type; it is the first byte of every frame.
type ID uint8

// Packet IDs. Client packets are 0..15, server packets 16 and up. Each is
// registered once, with its name, direction and body, in the registry
// table (registry.go).
const (
	IDClientProtocol     ID = 0
	IDClientDefs         ID = 1
	IDClientUsername     ID = 2
	IDClientWorldReady   ID = 3
	IDClientCommand      ID = 4
	IDClientClock        ID = 5
	IDClientAck          ID = 6
	IDClientTickAck      ID = 7
	IDClientKeepalive    ID = 8
	IDClientHashes       ID = 9
	IDClientResynced     ID = 10
	IDClientLeave        ID = 11
	IDClientChat         ID = 12
	IDClientUpload       ID = 13
	IDClientContentGet   ID = 14
	IDClientExplainReply ID = 15

	IDServerModList        ID = 16
	IDServerDefsOK         ID = 17
	IDServerWorldData      ID = 18
	IDServerPlayerList     ID = 19
	IDServerDisconnect     ID = 20
	IDServerNotice         ID = 21
	IDServerTick           ID = 22
	IDServerClock          ID = 23
	IDServerKeepalive      ID = 24
	IDServerSession        ID = 25
	IDServerResync         ID = 26
	IDServerDesync         ID = 27
	IDServerChat           ID = 28
	IDServerUploadRequest  ID = 29
	IDServerUploadResult   ID = 30
	IDServerContent        ID = 31
	IDServerExplainRequest ID = 32
)

// String returns the packet's protocol name.
func (id ID) String() string {
	if e := lookup(id); e != nil {
		return e.name
	}
	return fmt.Sprintf("packet(%d)", uint8(id))
}

// FromClient reports whether id is in the client range (below
// FirstServerID). Every registered packet's direction agrees with it.
func (id ID) FromClient() bool { return id < FirstServerID }

// FirstServerID is the lowest ID of a host-to-client packet; client
// packets are below it.
const FirstServerID ID = 16

// Packet is one packet body.
type Packet interface {
	// ID is the packet's frame ID.
	ID() ID
	// Validate checks limits that the encoding alone cannot express.
	Validate() error
}

// ErrUnknownPacket reports a frame whose ID names no packet.
var ErrUnknownPacket = errors.New("unknown packet ID")

// New returns an empty packet for id.
func New(id ID) (Packet, error) {
	if e := lookup(id); e != nil {
		return e.new(), nil
	}
	return nil, fmt.Errorf("%w %d", ErrUnknownPacket, uint8(id))
}

// Decode decodes and validates the body of a frame with the given id.
func Decode(id ID, body []byte) (Packet, error) {
	p, err := New(id)
	if err != nil {
		return nil, err
	}
	if err := Unmarshal(body, p); err != nil {
		return nil, fmt.Errorf("%s: %w", id, err)
	}
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", id, err)
	}
	return p, nil
}
