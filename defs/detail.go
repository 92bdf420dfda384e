package defs

import (
	"bytes"
	"fmt"
	"io"

	"github.com/klauspost/compress/gzip"
)

// MarshalDetail encodes a manifest compactly for a rejected client: gzip
// over the JSON manifest. Def names, mods and hashes repeat a lot, so this
// keeps the detail of large databases small enough for one packet.
func MarshalDetail(m *Manifest) ([]byte, error) {
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return nil, err
	}
	if err := WriteManifest(zw, m); err != nil {
		return nil, fmt.Errorf("encode detail: %w", err)
	}
	if err := zw.Close(); err != nil {
		return nil, fmt.Errorf("encode detail: %w", err)
	}
	return buf.Bytes(), nil
}

// UnmarshalDetail decodes MarshalDetail's output, inflating at most
// MaxManifestSize bytes.
func UnmarshalDetail(b []byte) (*Manifest, error) {
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("decode detail: %w", err)
	}
	defer zr.Close()
	m, err := ReadManifest(io.LimitReader(zr, MaxManifestSize+1))
	if err != nil {
		return nil, fmt.Errorf("decode detail: %w", err)
	}
	return m, nil
}
