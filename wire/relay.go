package wire

import (
	"errors"
	"fmt"
)

// The packets of relay mode (docs/protocol.md, section 14): a relay host
// runs no simulation, and the one client that proved the arbiter secret
// uploads the world to it when asked.

// DefaultUploadLimit is the Limit of a Server_UploadRequest unless the
// host is configured otherwise: the most bytes of one upload's payload.
const DefaultUploadLimit = 1 << 30

// UploadKind says what a Server_UploadRequest asks the arbiter for.
type UploadKind uint8

// Upload kinds.
const (
	// UploadWorld asks for the arbiter's world in a session that has
	// none yet; the session's clock starts at the upload's tick.
	UploadWorld UploadKind = 0
	// UploadJoinPoint asks for the whole world at the request's tick and
	// applied count: a join point.
	UploadJoinPoint UploadKind = 1
	// UploadMaps asks for the world-level state and the maps the request
	// names, at its tick and applied count: a repair.
	UploadMaps UploadKind = 2
)

var uploadKindNames = [...]string{UploadWorld: "world", UploadJoinPoint: "join point", UploadMaps: "maps"}

// String names the kind as the spec does.
func (k UploadKind) String() string {
	if int(k) < len(uploadKindNames) {
		return uploadKindNames[k]
	}
	return fmt.Sprintf("UploadKind(%d)", uint8(k))
}

// UploadResult says how the host took an upload.
type UploadResult uint8

// Upload results.
const (
	// UploadAccepted: the upload checked out and is in use.
	UploadAccepted UploadResult = 0
	// UploadRefused: the upload broke a rule; the message says which.
	UploadRefused UploadResult = 1
	// UploadCancelled: the host no longer wants it (it came too late, or
	// another arbiter took over); chunks of it still in flight are read
	// and dropped.
	UploadCancelled UploadResult = 2
)

var uploadResultNames = [...]string{UploadAccepted: "accepted", UploadRefused: "refused", UploadCancelled: "cancelled"}

// String names the result as the spec does.
func (r UploadResult) String() string {
	if int(r) < len(uploadResultNames) {
		return uploadResultNames[r]
	}
	return fmt.Sprintf("UploadResult(%d)", uint8(r))
}

// ClientUpload is one chunk of an upload: a world payload (the spec's
// section 8 layout) the arbiter sends in answer to a Server_UploadRequest.
// Chunks come in order from offset 0; Total is the payload's size, the
// same in every chunk and at most the request's Limit.
type ClientUpload struct {
	Request uint32 `codec:"q"`
	Offset  uint64 `codec:"o"`
	Total   uint64 `codec:"t"`
	Data    []byte `codec:"d"`
}

// ID implements Packet.
func (*ClientUpload) ID() ID { return IDClientUpload }

func (p *ClientUpload) bulk() (*[]byte, int) { return &p.Data, MaxChunkData }

// Validate implements Packet.
func (p *ClientUpload) Validate() error {
	if p.Request == 0 {
		return errors.New("upload for request 0")
	}
	if len(p.Data) > MaxChunkData {
		return fmt.Errorf("upload chunk of %d bytes exceeds %d", len(p.Data), MaxChunkData)
	}
	if p.Offset > p.Total || uint64(len(p.Data)) > p.Total-p.Offset {
		return fmt.Errorf("upload chunk at %d of %d bytes runs past the total %d", p.Offset, len(p.Data), p.Total)
	}
	return nil
}

// ServerUploadRequest asks the arbiter for an upload: the world of a new
// session, a join point, or maps for a repair. Tick and Applied name the
// cut (tick Tick after its first Applied commands, as in Server_Resync);
// Maps names the maps of an UploadMaps request, in the order the upload
// lists them; Limit is the most bytes the host takes for the payload.
type ServerUploadRequest struct {
	Request uint32     `codec:"q"`
	Kind    UploadKind `codec:"k"`
	Tick    uint64     `codec:"t"`
	Applied uint32     `codec:"a"`
	Maps    []int32    `codec:"m"`
	Limit   uint64     `codec:"l"`
}

// ID implements Packet.
func (*ServerUploadRequest) ID() ID { return IDServerUploadRequest }

// Validate implements Packet.
func (p *ServerUploadRequest) Validate() error {
	if p.Request == 0 {
		return errors.New("upload request 0")
	}
	if len(p.Maps) > MaxHashMaps {
		return fmt.Errorf("%d maps exceeds %d", len(p.Maps), MaxHashMaps)
	}
	switch p.Kind {
	case UploadWorld, UploadJoinPoint:
		if len(p.Maps) > 0 {
			return fmt.Errorf("a %s request names maps", p.Kind)
		}
	case UploadMaps:
		if len(p.Maps) == 0 {
			return errors.New("a maps request names no map")
		}
	default:
		return fmt.Errorf("unknown upload kind %d", uint8(p.Kind))
	}
	return nil
}

// ServerUploadResult tells the arbiter how the host took its upload for
// Request (or that it no longer wants it).
type ServerUploadResult struct {
	Request uint32       `codec:"q"`
	Result  UploadResult `codec:"r"`
	Message string       `codec:"m"`
}

// ID implements Packet.
func (*ServerUploadResult) ID() ID { return IDServerUploadResult }

// Validate implements Packet.
func (p *ServerUploadResult) Validate() error {
	if p.Result > UploadCancelled {
		return fmt.Errorf("unknown upload result %d", uint8(p.Result))
	}
	if len(p.Message) > MaxTextBytes {
		return fmt.Errorf("message of %d bytes exceeds %d", len(p.Message), MaxTextBytes)
	}
	return nil
}
