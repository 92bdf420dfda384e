package savestest

import (
	"encoding/binary"
	"fmt"
	"os"

	"github.com/cespare/xxhash/v2"

	"github.com/lockhost/lockhost/internal/codec"
	"github.com/lockhost/lockhost/saves"
	"github.com/lockhost/lockhost/snapshot"
)

// Sparse writes at path a save of size bytes whose prefix, meta and body
// header are valid and agree with size: the body declares one world blob
// that fills the rest of the file, which is left as a hole (zeros that
// take no disk space), so the blob's hash does not match. The file costs
// a few hundred bytes of disk whatever its size.
func Sparse(path string, size int64, meta saves.Meta) error {
	mb, err := codec.Encode(&meta)
	if err != nil {
		return fmt.Errorf("sparse save: meta: %w", err)
	}
	h := snapshot.Header{Tick: meta.Tick, Granted: meta.Tick}
	// The header's length depends on the blob size it holds: settle it.
	var hb []byte
	for range 3 {
		if hb, err = codec.Encode(&h); err != nil {
			return fmt.Errorf("sparse save: header: %w", err)
		}
		rest := size - int64(24+len(mb)+12+len(hb)+8)
		if rest <= 0 {
			return fmt.Errorf("sparse save: %d bytes is too small", size)
		}
		h.World = snapshot.BlobInfo{Size: uint64(rest), RawSize: uint64(rest), Hash: 1}
	}
	if hb, err = codec.Encode(&h); err != nil {
		return fmt.Errorf("sparse save: header: %w", err)
	}
	if int64(24+len(mb)+12+len(hb)+8)+int64(h.World.Size) != size {
		return fmt.Errorf("sparse save: the header's length did not settle")
	}
	b := []byte(saves.Magic)
	b = binary.BigEndian.AppendUint16(b, saves.FormatVersion)
	b = binary.BigEndian.AppendUint16(b, 0)
	b = binary.BigEndian.AppendUint64(b, uint64(size))
	b = binary.BigEndian.AppendUint32(b, uint32(len(mb)))
	b = append(b, mb...)
	b = binary.BigEndian.AppendUint32(b, uint32(len(hb)))
	b = binary.BigEndian.AppendUint64(b, xxhash.Sum64(hb))
	b = append(b, hb...)
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("sparse save: %w", err)
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return fmt.Errorf("sparse save: %w", err)
	}
	if err := f.Truncate(size); err != nil {
		f.Close()
		return fmt.Errorf("sparse save: %w", err)
	}
	return f.Close()
}
