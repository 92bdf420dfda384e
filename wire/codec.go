package wire

import (
	"fmt"

	"github.com/lockhost/lockhost/internal/codec"
)

// Marshal encodes p and appends it as one frame to dst.
func Marshal(dst []byte, p Packet) ([]byte, error) {
	body, err := codec.Encode(p)
	if err != nil {
		return dst, fmt.Errorf("encode %s: %w", p.ID(), err)
	}
	return AppendFrame(dst, p.ID(), body), nil
}

// MustMarshal is Marshal for packets that cannot fail to encode (every
// packet of this package with in-limit values); it panics otherwise.
func MustMarshal(p Packet) []byte {
	b, err := Marshal(nil, p)
	if err != nil {
		panic(err)
	}
	return b
}

// Unmarshal decodes body into p with the limits of package codec. The
// whole body must be consumed. Byte slices in p never alias body.
func Unmarshal(body []byte, p Packet) error {
	b, ok := p.(bulky)
	if !ok {
		return codec.Decode(body, p)
	}
	field, most := b.bulk()
	*field = make([]byte, 0, min(len(body), most))
	err := codec.Decode(body, p)
	if len(*field) == 0 && cap(*field) > 0 {
		*field = nil // the field was absent: as if no room had been made
	}
	return err
}

// bulky is a packet with one byte field that may be nearly as large as
// the packet: a world or upload chunk, a command's payload. The decoder
// library allocates a byte field it must make in 4 KiB steps, copying all
// it has at each step (codec.MaxInitLen bounds a first allocation whose
// claimed length it cannot check), which made a 256 KiB chunk cost 64
// allocations and 8 MiB of copying. A field that already has the room is
// filled in place, so Unmarshal makes it: len(body) bytes, which holds
// the field, since the body holds it and a few bytes of keys, and is
// never more than what the peer sent (the frame limit bounded the body).
// bulk returns the field and the most bytes it may hold; past that the
// library's steps apply again, and Validate refuses the packet.
type bulky interface {
	bulk() (field *[]byte, most int)
}
