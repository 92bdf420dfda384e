package codec

import (
	"fmt"
	"sync"

	msgpack "github.com/hashicorp/go-msgpack/v2/codec"
)

// MaxDepth bounds how deeply containers may nest in a decoded value.
const MaxDepth = 16

// MaxInitLen bounds how many elements a decoder allocates up front for a
// slice or map, whatever length the input claims.
const MaxInitLen = 4096

// handle is shared by every encoder and decoder. It is configured once and
// never changed afterwards, which is what the library requires for
// concurrent use.
var handle = func() *msgpack.MsgpackHandle {
	h := &msgpack.MsgpackHandle{WriteExt: true}
	h.MaxDepth = MaxDepth
	h.MaxInitLen = MaxInitLen
	h.ErrorIfNoField = false
	h.ExplicitRelease = true
	return h
}()

var encPool = sync.Pool{New: func() any {
	var b []byte
	return msgpack.NewEncoderBytes(&b, handle)
}}

var decPool = sync.Pool{New: func() any {
	return msgpack.NewDecoderBytes(noBytes, handle)
}}

// noBytes is an empty, non-nil input for resetting decoders.
var noBytes = []byte{}

// Encode returns v encoded as msgpack. An error is the library's, left for
// the caller to say what was being encoded.
func Encode(v any) ([]byte, error) {
	enc := encPool.Get().(*msgpack.Encoder)
	var body []byte
	enc.ResetBytes(&body)
	err := enc.Encode(v)
	encPool.Put(enc)
	return body, err
}

// Decode decodes msgpack body into v, which must be a pointer. The whole
// body must be consumed. Byte slices in v never alias body.
func Decode(body []byte, v any) error {
	n, err := DecodePrefix(body, v)
	if err != nil {
		return err
	}
	if n != len(body) {
		return fmt.Errorf("decode: %d trailing bytes", len(body)-n)
	}
	return nil
}

// DecodePrefix decodes one msgpack value from the start of b into v, which
// must be a pointer, and returns how many bytes it took; bytes after it
// are left alone. It is for finding where a value ends when its length is
// not known (or not trusted). Byte slices in v never alias b.
func DecodePrefix(b []byte, v any) (n int, err error) {
	// ResetBytes ignores a nil slice (it would leave the decoder reading
	// whatever it read last), so always hand it a non-nil one.
	if b == nil {
		b = noBytes
	}
	dec := decPool.Get().(*msgpack.Decoder)
	defer func() {
		// A fresh ResetBytes clears any sticky error before reuse and
		// drops the reference to b.
		dec.ResetBytes(noBytes)
		decPool.Put(dec)
		if r := recover(); r != nil {
			n, err = 0, fmt.Errorf("decode: %v", r)
		}
	}()
	dec.ResetBytes(b)
	if err := dec.Decode(v); err != nil {
		return 0, fmt.Errorf("decode: %w", err)
	}
	return dec.NumBytesRead(), nil
}
