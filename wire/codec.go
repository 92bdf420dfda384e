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
func Unmarshal(body []byte, p Packet) error { return codec.Decode(body, p) }
