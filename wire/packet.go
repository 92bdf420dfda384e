package wire

import (
	"errors"
	"fmt"
)

// ID identifies a packet type; it is the first byte of every frame.
type ID uint8

// Packet IDs. Client packets are 0..15, server packets 16 and up.
const (
	IDClientProtocol   ID = 0
	IDClientDefs       ID = 1
	IDClientUsername   ID = 2
	IDClientWorldReady ID = 3
	IDClientCommand    ID = 4
	IDClientClock      ID = 5
	IDClientAck        ID = 6
	IDClientTickAck    ID = 7
	IDClientKeepalive  ID = 8
	IDClientHashes     ID = 9
	IDClientResynced   ID = 10

	IDServerModList    ID = 16
	IDServerDefsOK     ID = 17
	IDServerWorldData  ID = 18
	IDServerPlayerList ID = 19
	IDServerDisconnect ID = 20
	IDServerNotice     ID = 21
	IDServerTick       ID = 22
	IDServerClock      ID = 23
	IDServerKeepalive  ID = 24
	IDServerSession    ID = 25
	IDServerResync     ID = 26
	IDServerDesync     ID = 27
)

var idNames = map[ID]string{
	IDClientProtocol:   "Client_Protocol",
	IDClientDefs:       "Client_Defs",
	IDClientUsername:   "Client_Username",
	IDClientWorldReady: "Client_WorldReady",
	IDClientCommand:    "Client_Command",
	IDClientClock:      "Client_Clock",
	IDClientAck:        "Client_Ack",
	IDClientTickAck:    "Client_TickAck",
	IDClientKeepalive:  "Client_Keepalive",
	IDClientHashes:     "Client_Hashes",
	IDClientResynced:   "Client_Resynced",
	IDServerModList:    "Server_ModList",
	IDServerDefsOK:     "Server_DefsOK",
	IDServerWorldData:  "Server_WorldData",
	IDServerPlayerList: "Server_PlayerList",
	IDServerDisconnect: "Server_Disconnect",
	IDServerNotice:     "Server_Notice",
	IDServerTick:       "Server_Tick",
	IDServerClock:      "Server_Clock",
	IDServerKeepalive:  "Server_Keepalive",
	IDServerSession:    "Server_Session",
	IDServerResync:     "Server_Resync",
	IDServerDesync:     "Server_Desync",
}

// String returns the packet's protocol name.
func (id ID) String() string {
	if s, ok := idNames[id]; ok {
		return s
	}
	return fmt.Sprintf("packet(%d)", uint8(id))
}

// FromClient reports whether id is in the client range.
func (id ID) FromClient() bool { return id < 16 }

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
	switch id {
	case IDClientProtocol:
		return &ClientProtocol{}, nil
	case IDClientDefs:
		return &ClientDefs{}, nil
	case IDClientUsername:
		return &ClientUsername{}, nil
	case IDClientWorldReady:
		return &ClientWorldReady{}, nil
	case IDClientCommand:
		return &ClientCommand{}, nil
	case IDClientClock:
		return &ClientClock{}, nil
	case IDClientAck:
		return &ClientAck{}, nil
	case IDClientTickAck:
		return &ClientTickAck{}, nil
	case IDClientKeepalive:
		return &ClientKeepalive{}, nil
	case IDClientHashes:
		return &ClientHashes{}, nil
	case IDClientResynced:
		return &ClientResynced{}, nil
	case IDServerModList:
		return &ServerModList{}, nil
	case IDServerDefsOK:
		return &ServerDefsOK{}, nil
	case IDServerWorldData:
		return &ServerWorldData{}, nil
	case IDServerPlayerList:
		return &ServerPlayerList{}, nil
	case IDServerDisconnect:
		return &ServerDisconnect{}, nil
	case IDServerNotice:
		return &ServerNotice{}, nil
	case IDServerTick:
		return &ServerTick{}, nil
	case IDServerClock:
		return &ServerClock{}, nil
	case IDServerKeepalive:
		return &ServerKeepalive{}, nil
	case IDServerSession:
		return &ServerSession{}, nil
	case IDServerResync:
		return &ServerResync{}, nil
	case IDServerDesync:
		return &ServerDesync{}, nil
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
