package lan

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"

	"github.com/lockhost/lockhost/status"
)

// Version is the discovery wire format version this package speaks.
const Version = 1

// Port is the UDP port hosts answer discovery probes on, whatever their
// game port.
const Port = 30501

const (
	// ProbeSize is the exact size of a probe datagram. It bounds every
	// reply: a host never answers with more bytes than the probe carried.
	ProbeSize = 192
	// replyHeader is the reply's magic, version, game port and host ID.
	replyHeader = 15
	// MinReplySize and MaxReplySize bound a reply datagram: the header
	// and one status reply.
	MinReplySize = replyHeader + status.MinReplySize
	// MaxReplySize is the largest reply, under ProbeSize.
	MaxReplySize = replyHeader + status.MaxReplySize
)

// A reply is never larger than a probe: the constant overflows uint (a
// compile error) if that stops being true.
const _ = uint(ProbeSize - MaxReplySize)

// The multicast groups probes are sent to: an organization-local IPv4
// group (RFC 2365) and a transient link-local IPv6 group (RFC 4291).
var (
	Group4 = netip.MustParseAddr("239.255.76.72")
	Group6 = netip.MustParseAddr("ff12::4c48")
)

const (
	probeMagic = "LHDQ"
	replyMagic = "LHDR"
)

// ErrMalformed is wrapped by every error DecodeReply returns.
var ErrMalformed = errors.New("lan: malformed discovery reply")

// AppendProbe appends a probe carrying probeID to b.
func AppendProbe(b []byte, probeID uint32) []byte {
	b = append(b, probeMagic...)
	b = append(b, Version)
	b = binary.BigEndian.AppendUint32(b, probeID)
	var pad [ProbeSize - 9]byte
	return append(b, pad[:]...)
}

// ParseProbe returns the probe ID of a well-formed probe: exactly
// ProbeSize bytes, right magic and version, all-zero padding.
func ParseProbe(p []byte) (probeID uint32, ok bool) {
	if len(p) != ProbeSize || string(p[:4]) != probeMagic || p[4] != Version {
		return 0, false
	}
	for _, c := range p[9:] {
		if c != 0 {
			return 0, false
		}
	}
	return binary.BigEndian.Uint32(p[5:9]), true
}

// Reply is one discovery reply.
type Reply struct {
	// GamePort is the host's TCP port, never 0.
	GamePort uint16
	// HostID is the host's own random number, the same in every reply
	// it sends while it runs, so a joiner that hears one host on
	// several addresses (IPv4 and IPv6, two interfaces) counts it once.
	HostID uint64
	// ProbeID is the ID of the probe it answers.
	ProbeID uint32
	// Info is the host's status reply.
	Info status.Info
}

// AppendReply appends r to b. It refuses a game port 0 and an info that
// status.Info.Validate refuses, so a reply is at most MaxReplySize bytes.
func AppendReply(b []byte, r Reply) ([]byte, error) {
	if r.GamePort == 0 {
		return b, errors.New("lan: game port 0")
	}
	head := len(b)
	b = append(b, replyMagic...)
	b = append(b, Version)
	b = binary.BigEndian.AppendUint16(b, r.GamePort)
	b = binary.BigEndian.AppendUint64(b, r.HostID)
	b, err := status.AppendReply(b, r.ProbeID, r.Info)
	if err != nil {
		return b[:head], fmt.Errorf("lan: %w", err)
	}
	return b, nil
}

// DecodeReply parses a reply datagram. It refuses (with an error wrapping
// ErrMalformed) anything AppendReply would not have produced.
func DecodeReply(p []byte) (Reply, error) {
	bad := func(format string, args ...any) (Reply, error) {
		return Reply{}, fmt.Errorf("%w: "+format, append([]any{ErrMalformed}, args...)...)
	}
	if len(p) < MinReplySize || len(p) > MaxReplySize {
		return bad("%d bytes, want %d to %d", len(p), MinReplySize, MaxReplySize)
	}
	if string(p[:4]) != replyMagic {
		return bad("wrong magic %q", p[:4])
	}
	if p[4] != Version {
		return bad("version %d, want %d", p[4], Version)
	}
	r := Reply{GamePort: binary.BigEndian.Uint16(p[5:7]), HostID: binary.BigEndian.Uint64(p[7:15])}
	if r.GamePort == 0 {
		return bad("game port 0")
	}
	// A discovery reply carries a version 1 status reply (no reach
	// section), whatever versions the status package reads.
	if v := p[replyHeader+4]; v != status.Version {
		return bad("status reply version %d, want %d", v, status.Version)
	}
	var err error
	r.ProbeID, r.Info, err = status.DecodeReply(p[replyHeader:])
	if err != nil {
		return bad("%v", err)
	}
	return r, nil
}
