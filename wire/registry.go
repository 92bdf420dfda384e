package wire

import "fmt"

// Direction says which side sends a packet.
type Direction uint8

// Directions.
const (
	// ClientToHost packets are sent by a joining client.
	ClientToHost Direction = iota
	// HostToClient packets are sent by the host.
	HostToClient
)

// String names the direction as the spec (docs/protocol.md) does.
func (d Direction) String() string {
	switch d {
	case ClientToHost:
		return "client to host"
	case HostToClient:
		return "host to client"
	}
	return fmt.Sprintf("direction(%d)", uint8(d))
}

// entry registers one packet: its ID, protocol name, direction and a
// constructor of an empty body. The registry is the only place a packet is
// listed; String, Direction, New and Decode all read it, and a test checks
// it against the spec, docs/protocol.md.
type entry struct {
	id   ID
	name string
	dir  Direction
	new  func() Packet
}

// registry lists every packet, in ID order.
var registry = [...]entry{
	{IDClientProtocol, "Client_Protocol", ClientToHost, func() Packet { return new(ClientProtocol) }},
	{IDClientDefs, "Client_Defs", ClientToHost, func() Packet { return new(ClientDefs) }},
	{IDClientUsername, "Client_Username", ClientToHost, func() Packet { return new(ClientUsername) }},
	{IDClientWorldReady, "Client_WorldReady", ClientToHost, func() Packet { return new(ClientWorldReady) }},
	{IDClientCommand, "Client_Command", ClientToHost, func() Packet { return new(ClientCommand) }},
	{IDClientClock, "Client_Clock", ClientToHost, func() Packet { return new(ClientClock) }},
	{IDClientAck, "Client_Ack", ClientToHost, func() Packet { return new(ClientAck) }},
	{IDClientTickAck, "Client_TickAck", ClientToHost, func() Packet { return new(ClientTickAck) }},
	{IDClientKeepalive, "Client_Keepalive", ClientToHost, func() Packet { return new(ClientKeepalive) }},
	{IDClientHashes, "Client_Hashes", ClientToHost, func() Packet { return new(ClientHashes) }},
	{IDClientResynced, "Client_Resynced", ClientToHost, func() Packet { return new(ClientResynced) }},
	{IDClientLeave, "Client_Leave", ClientToHost, func() Packet { return new(ClientLeave) }},
	{IDClientChat, "Client_Chat", ClientToHost, func() Packet { return new(ClientChat) }},
	{IDClientUpload, "Client_Upload", ClientToHost, func() Packet { return new(ClientUpload) }},
	{IDClientContentGet, "Client_ContentGet", ClientToHost, func() Packet { return new(ClientContentGet) }},
	{IDClientExplainReply, "Client_ExplainReply", ClientToHost, func() Packet { return new(ClientExplainReply) }},

	{IDServerModList, "Server_ModList", HostToClient, func() Packet { return new(ServerModList) }},
	{IDServerDefsOK, "Server_DefsOK", HostToClient, func() Packet { return new(ServerDefsOK) }},
	{IDServerWorldData, "Server_WorldData", HostToClient, func() Packet { return new(ServerWorldData) }},
	{IDServerPlayerList, "Server_PlayerList", HostToClient, func() Packet { return new(ServerPlayerList) }},
	{IDServerDisconnect, "Server_Disconnect", HostToClient, func() Packet { return new(ServerDisconnect) }},
	{IDServerNotice, "Server_Notice", HostToClient, func() Packet { return new(ServerNotice) }},
	{IDServerTick, "Server_Tick", HostToClient, func() Packet { return new(ServerTick) }},
	{IDServerClock, "Server_Clock", HostToClient, func() Packet { return new(ServerClock) }},
	{IDServerKeepalive, "Server_Keepalive", HostToClient, func() Packet { return new(ServerKeepalive) }},
	{IDServerSession, "Server_Session", HostToClient, func() Packet { return new(ServerSession) }},
	{IDServerResync, "Server_Resync", HostToClient, func() Packet { return new(ServerResync) }},
	{IDServerDesync, "Server_Desync", HostToClient, func() Packet { return new(ServerDesync) }},
	{IDServerChat, "Server_Chat", HostToClient, func() Packet { return new(ServerChat) }},
	{IDServerUploadRequest, "Server_UploadRequest", HostToClient, func() Packet { return new(ServerUploadRequest) }},
	{IDServerUploadResult, "Server_UploadResult", HostToClient, func() Packet { return new(ServerUploadResult) }},
	{IDServerContent, "Server_Content", HostToClient, func() Packet { return new(ServerContent) }},
	{IDServerExplainRequest, "Server_ExplainRequest", HostToClient, func() Packet { return new(ServerExplainRequest) }},
}

// byID indexes the registry by packet ID.
var byID = func() (t [256]*entry) {
	for i := range registry {
		e := &registry[i]
		if t[e.id] != nil {
			panic(fmt.Sprintf("wire: packet ID %d registered twice", e.id))
		}
		t[e.id] = e
	}
	return t
}()

// lookup returns id's registry entry, or nil for an unknown ID.
func lookup(id ID) *entry { return byID[id] }

// Direction returns which side sends packets with this ID, and false for
// an ID that names no packet.
func (id ID) Direction() (Direction, bool) {
	if e := lookup(id); e != nil {
		return e.dir, true
	}
	return 0, false
}

// IDs returns the ID of every packet, in ascending order.
func IDs() []ID {
	out := make([]ID, len(registry))
	for i, e := range registry {
		out[i] = e.id
	}
	return out
}
