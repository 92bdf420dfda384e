package wire

import (
	"errors"
	"fmt"
)

// Explaining a desync (docs/protocol.md section 10.1): after a desync the
// host asks the player for its side of the window between the last
// matching checkpoint and the one that differed (Server_ExplainRequest),
// and the player answers with an explanation answer document, in chunks
// (Client_ExplainReply).

const (
	// MaxExplainTicks bounds an explanation's window: To-From of
	// Server_ExplainRequest.
	MaxExplainTicks = 1024
	// MaxExplainMaps bounds the maps one explanation covers.
	MaxExplainMaps = 16
	// MaxExplainChunk bounds the data of one Client_ExplainReply.
	MaxExplainChunk = 64 << 10
	// MaxExplainReply bounds the answer document a host may ask for
	// (Server_ExplainRequest's Limit).
	MaxExplainReply = 32 << 20
)

// ServerExplainRequest asks a desynced player for its side of the window
// From..To (the last checkpoint at which its hashes matched, and the one
// at which they differed): Maps are the maps that differed, Hashes the
// host's re-simulation's hashes of the world-level state and of Maps
// after every tick From..To-1, tick by tick, the world first. Request
// numbers the host's requests to this player from 1 up; Limit is the
// most bytes the answer may have.
type ServerExplainRequest struct {
	Request uint32   `codec:"q"`
	From    uint64   `codec:"f"`
	To      uint64   `codec:"t"`
	Maps    []int32  `codec:"m"`
	Hashes  []uint64 `codec:"h"`
	Limit   uint64   `codec:"l"`
}

// ID implements Packet.
func (*ServerExplainRequest) ID() ID { return IDServerExplainRequest }

// Validate implements Packet.
func (p *ServerExplainRequest) Validate() error {
	switch {
	case p.Request == 0:
		return errors.New("explain request 0")
	case p.To <= p.From || p.To-p.From > MaxExplainTicks:
		return fmt.Errorf("explain window %d..%d: empty or longer than %d ticks", p.From, p.To, MaxExplainTicks)
	case len(p.Maps) > MaxExplainMaps:
		return fmt.Errorf("explain request for %d maps exceeds %d", len(p.Maps), MaxExplainMaps)
	case uint64(len(p.Hashes)) != (p.To-p.From)*uint64(1+len(p.Maps)):
		return fmt.Errorf("explain request with %d hashes for %d ticks of %d maps and the world", len(p.Hashes), p.To-p.From, len(p.Maps))
	case p.Limit > MaxExplainReply:
		return fmt.Errorf("explain answer limit %d exceeds %d", p.Limit, MaxExplainReply)
	}
	return nil
}

// ClientExplainReply is one chunk of a player's answer to a
// Server_ExplainRequest: the answer document (docs/protocol.md section
// 10.1), in order from offset 0, Total its size in every chunk and at most
// the request's Limit. A player that cannot answer sends one chunk with
// Total 0 and Error saying why.
type ClientExplainReply struct {
	Request uint32 `codec:"q"`
	Offset  uint64 `codec:"o"`
	Total   uint64 `codec:"t"`
	Data    []byte `codec:"d"`
	Error   string `codec:"e"`
}

// ID implements Packet.
func (*ClientExplainReply) ID() ID { return IDClientExplainReply }

func (p *ClientExplainReply) bulk() (*[]byte, int) { return &p.Data, MaxExplainChunk }

// Validate implements Packet.
func (p *ClientExplainReply) Validate() error {
	switch {
	case p.Request == 0:
		return errors.New("explain reply for request 0")
	case len(p.Data) > MaxExplainChunk:
		return fmt.Errorf("explain reply chunk of %d bytes exceeds %d", len(p.Data), MaxExplainChunk)
	case p.Total > MaxExplainReply:
		return fmt.Errorf("explain reply of %d bytes exceeds %d", p.Total, MaxExplainReply)
	case p.Offset > p.Total || uint64(len(p.Data)) > p.Total-p.Offset:
		return fmt.Errorf("explain reply chunk at %d of %d bytes runs past the total %d", p.Offset, len(p.Data), p.Total)
	case len(p.Error) > MaxTextBytes:
		return fmt.Errorf("explain reply error of %d bytes", len(p.Error))
	case p.Error != "" && (p.Total != 0 || len(p.Data) != 0):
		return errors.New("explain reply with both an error and data")
	}
	return nil
}
