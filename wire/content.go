package wire

import (
	"errors"
	"fmt"
)

// The packets of content sync over the session connection
// (docs/protocol.md, section 17.4): a host that shares its mods' data
// offers its content manifest in Server_ModList (ContentHash,
// ContentSize); a client whose def databases differ may then, instead of
// Client_Defs, ask for the manifest and for files by hash, and the host
// answers each request with Server_Content chunks.

// MaxContentManifest bounds the content manifest a host offers and a
// client fetches (Server_ModList's l): 32 MiB.
const MaxContentManifest = 32 << 20

// ContentHashSize is the size of a content hash: a SHA-256.
const ContentHashSize = 32

// Content codings of Server_Content's z: a chunk's bytes as they are, or
// one gzip member or zstd frame of them (section 8.1's codecs, plus one).
const (
	ContentStored uint8 = 0
	ContentGzip   uint8 = 1
	ContentZstd   uint8 = 2
)

// ClientContentGet asks the host for its content manifest (Hash empty)
// or for a shared file by its SHA-256, from byte Offset on.
type ClientContentGet struct {
	Hash   []byte `codec:"h"`
	Offset uint64 `codec:"o"`
}

// ID implements Packet.
func (*ClientContentGet) ID() ID { return IDClientContentGet }

// Validate implements Packet.
func (p *ClientContentGet) Validate() error {
	if len(p.Hash) != 0 && len(p.Hash) != ContentHashSize {
		return fmt.Errorf("content hash of %d bytes, want %d or none", len(p.Hash), ContentHashSize)
	}
	return nil
}

// ServerContent is one chunk of the answer to a Client_ContentGet: the
// file's (or, Hash empty, the manifest's) bytes Offset to Offset+Length
// of Total, coded as Coding says.
type ServerContent struct {
	Hash   []byte `codec:"h"`
	Offset uint64 `codec:"o"`
	Total  uint64 `codec:"t"`
	Length uint32 `codec:"n"`
	Coding uint8  `codec:"z"`
	Data   []byte `codec:"d"`
}

// ID implements Packet.
func (*ServerContent) ID() ID { return IDServerContent }

func (p *ServerContent) bulk() (*[]byte, int) { return &p.Data, MaxChunkData }

// Validate implements Packet.
func (p *ServerContent) Validate() error {
	if len(p.Hash) != 0 && len(p.Hash) != ContentHashSize {
		return fmt.Errorf("content hash of %d bytes, want %d or none", len(p.Hash), ContentHashSize)
	}
	if p.Length > MaxChunkData || len(p.Data) > MaxChunkData {
		return fmt.Errorf("content chunk of %d bytes (%d on the wire) exceeds %d", p.Length, len(p.Data), MaxChunkData)
	}
	if p.Offset > p.Total || uint64(p.Length) > p.Total-p.Offset {
		return fmt.Errorf("content chunk at %d of %d bytes runs past the total %d", p.Offset, p.Length, p.Total)
	}
	switch p.Coding {
	case ContentStored:
		if len(p.Data) != int(p.Length) {
			return fmt.Errorf("stored content chunk of %d bytes declares %d", len(p.Data), p.Length)
		}
	case ContentGzip, ContentZstd:
		if len(p.Data) == 0 {
			return errors.New("compressed content chunk with no data")
		}
	default:
		return fmt.Errorf("unknown content coding %d", p.Coding)
	}
	return nil
}
