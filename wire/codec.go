package wire

import (
	"fmt"
	"sync"

	"github.com/hashicorp/go-msgpack/v2/codec"
)

// handle is shared by every encoder and decoder. It is configured once and
// never changed afterwards, which is what the codec library requires for
// concurrent use.
var handle = func() *codec.MsgpackHandle {
	h := &codec.MsgpackHandle{WriteExt: true}
	h.MaxDepth = 16
	h.MaxInitLen = 4096
	h.ErrorIfNoField = false
	h.ExplicitRelease = true
	return h
}()

var encPool = sync.Pool{New: func() any {
	var b []byte
	return codec.NewEncoderBytes(&b, handle)
}}

var decPool = sync.Pool{New: func() any {
	return codec.NewDecoderBytes(noBytes, handle)
}}

// noBytes is an empty, non-nil input for resetting decoders.
var noBytes = []byte{}

// Marshal encodes p and appends it as one frame to dst.
func Marshal(dst []byte, p Packet) ([]byte, error) {
	body, err := EncodeValue(p)
	if err != nil {
		return dst, fmt.Errorf("encode %s: %w", p.ID(), err)
	}
	return AppendFrame(dst, p.ID(), body), nil
}

// EncodeValue encodes v as msgpack with the protocol's settings. It is for
// structures that travel inside payloads rather than as packets.
func EncodeValue(v any) ([]byte, error) {
	enc := encPool.Get().(*codec.Encoder)
	var body []byte
	enc.ResetBytes(&body)
	err := enc.Encode(v)
	encPool.Put(enc)
	return body, err
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

// Unmarshal decodes body into p. The whole body must be consumed. Byte
// slices in p never alias body.
func Unmarshal(body []byte, p Packet) error { return DecodeValue(body, p) }

// DecodeValue decodes msgpack body into v with the protocol's limits. The
// whole body must be consumed.
func DecodeValue(body []byte, v any) (err error) {
	// ResetBytes ignores a nil slice (it would leave the decoder reading
	// whatever it read last), so always hand it a non-nil one.
	if body == nil {
		body = noBytes
	}
	dec := decPool.Get().(*codec.Decoder)
	defer func() {
		// A fresh ResetBytes clears any sticky error before reuse and
		// drops the reference to body.
		dec.ResetBytes(noBytes)
		decPool.Put(dec)
		if r := recover(); r != nil {
			err = fmt.Errorf("decode: %v", r)
		}
	}()
	dec.ResetBytes(body)
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("decode: %w", err)
	}
	if n := dec.NumBytesRead(); n != len(body) {
		return fmt.Errorf("decode: %d trailing bytes", len(body)-n)
	}
	return nil
}
