package rcon

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// Packet types.
const (
	TypeResponseValue int32 = 0 // server: command output
	TypeExecCommand   int32 = 2 // client: run a command
	TypeAuthResponse  int32 = 2 // server: authentication result
	TypeAuth          int32 = 3 // client: the password
)

// Size limits.
const (
	// MaxPacket is the most bytes a client packet may take, its size
	// field included.
	MaxPacket = 4096
	// MaxResponseBody is the most body bytes in one response packet.
	MaxResponseBody = 4096
	// minSize is the smallest size field: ID, type and two NULs.
	minSize = 10
)

// AuthFailedID is the request ID of a refused SERVERDATA_AUTH_RESPONSE.
const AuthFailedID int32 = -1

// Errors of the decoder.
var (
	ErrPacketSize = errors.New("rcon: packet size out of range")
	ErrTerminator = errors.New("rcon: packet not terminated by two NULs")
)

// Packet is one RCON packet.
type Packet struct {
	ID   int32
	Type int32
	Body []byte
}

// Decode decodes a packet from b, the bytes after its size field (so
// len(b) is the size field's value).
func Decode(b []byte) (Packet, error) {
	if len(b) < minSize || len(b) > MaxPacket-4 {
		return Packet{}, fmt.Errorf("%w: %d bytes", ErrPacketSize, len(b))
	}
	if b[len(b)-1] != 0 || b[len(b)-2] != 0 {
		return Packet{}, ErrTerminator
	}
	body := b[8 : len(b)-2]
	return Packet{
		ID:   int32(binary.LittleEndian.Uint32(b[0:4])),
		Type: int32(binary.LittleEndian.Uint32(b[4:8])),
		Body: append([]byte(nil), body...),
	}, nil
}

// ReadPacket reads one client packet from r. The size field is checked
// against MaxPacket before anything is allocated for the rest.
func ReadPacket(r io.Reader) (Packet, error) {
	var hdr [4]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return Packet{}, err
	}
	size := int32(binary.LittleEndian.Uint32(hdr[:]))
	if size < minSize || size > MaxPacket-4 {
		return Packet{}, fmt.Errorf("%w: size field %d", ErrPacketSize, size)
	}
	b := make([]byte, size)
	if _, err := io.ReadFull(r, b); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return Packet{}, fmt.Errorf("rcon: packet cut short: %w", err)
	}
	return Decode(b)
}

// Append appends p in wire form to dst. The body is not checked against
// any limit; the server splits output before it gets here.
func Append(dst []byte, p Packet) []byte {
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(p.Body)+minSize))
	dst = binary.LittleEndian.AppendUint32(dst, uint32(p.ID))
	dst = binary.LittleEndian.AppendUint32(dst, uint32(p.Type))
	dst = append(dst, p.Body...)
	return append(dst, 0, 0)
}

// split cuts output into bodies of at most MaxResponseBody bytes, every
// one but the last full; an empty output is one empty body.
func split(output []byte) [][]byte {
	if len(output) == 0 {
		return [][]byte{nil}
	}
	var parts [][]byte
	for len(output) > 0 {
		n := min(len(output), MaxResponseBody)
		parts = append(parts, output[:n])
		output = output[n:]
	}
	return parts
}
