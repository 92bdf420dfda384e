package status

import (
	"encoding/binary"
	"fmt"
	"net/netip"
)

// ReachVersion is the version of a request that also asks how the host is
// reached from the internet, and of its reply: a version 1 reply and then
// the Reach trailer. A host that speaks only version 1 drops such a
// request, so Ping sends a version 1 request beside it.
const ReachVersion = 2

// reachMax is the largest Reach trailer: the mapping state, the address
// length, an IPv6 address and a port.
const reachMax = 1 + 1 + 16 + 2

// MaxReachReplySize is the size of the largest version 2 reply.
const MaxReachReplySize = MaxReplySize + reachMax

// A version 2 reply, too, is never more than MaxAmplification times the
// request.
const _ = uint(MaxAmplification*RequestSize - MaxReachReplySize)

// Mapping is the state of a host's port mapping on its router.
type Mapping uint8

// The mapping states a reply carries.
const (
	// MappingUnknown: a version 1 reply, which does not say.
	MappingUnknown Mapping = iota
	// MappingOff: the host asks no router.
	MappingOff
	// MappingSearching: the host is asking its LAN for a router.
	MappingSearching
	// MappingMapped: the router forwards the port; External is the
	// address to join.
	MappingMapped
	// MappingNoRouter: no router answered, or it refused.
	MappingNoRouter
	// MappingLost: the mapping was made, but its last renewal failed.
	MappingLost
	// MappingRemoved: the host removed its mapping (it is stopping).
	MappingRemoved
	mappingEnd
)

var mappingNames = [...]string{"unknown", "off", "searching", "mapped", "no router", "lost", "removed"}

// String is the state in words.
func (m Mapping) String() string {
	if m >= mappingEnd {
		return fmt.Sprintf("mapping(%d)", uint8(m))
	}
	return mappingNames[m]
}

// ParseMapping is the Mapping named s (as String says it), or
// MappingUnknown.
func ParseMapping(s string) Mapping {
	for i, n := range mappingNames {
		if n == s {
			return Mapping(i)
		}
	}
	return MappingUnknown
}

// Reach is how the host is reached from the internet, as a version 2
// reply says it.
type Reach struct {
	Mapping Mapping
	// External is the address the router forwards to the host (invalid
	// when none).
	External netip.AddrPort
}

// appendReach appends the trailer of a version 2 reply: the mapping
// state, n = the address length (0, 4 or 16), the address and, when n is
// not 0, the port.
func appendReach(b []byte, r Reach) []byte {
	m := r.Mapping
	if m >= mappingEnd {
		m = MappingUnknown
	}
	b = append(b, byte(m))
	if !r.External.IsValid() {
		return append(b, 0)
	}
	a := r.External.Addr().Unmap()
	raw := a.AsSlice()
	b = append(b, byte(len(raw)))
	b = append(b, raw...)
	return binary.BigEndian.AppendUint16(b, r.External.Port())
}

// readReach reads a version 2 or 3 reply's reach trailer and returns the
// bytes after it.
func readReach(p []byte) (Reach, []byte, error) {
	if len(p) < 2 {
		return Reach{}, nil, fmt.Errorf("%w: reach trailer of %d bytes", ErrMalformed, len(p))
	}
	r := Reach{Mapping: Mapping(p[0])}
	if r.Mapping >= mappingEnd {
		return Reach{}, nil, fmt.Errorf("%w: mapping state %d", ErrMalformed, p[0])
	}
	n := int(p[1])
	rest := p[2:]
	switch {
	case n == 0:
		return r, rest, nil
	case (n == 4 || n == 16) && len(rest) >= n+2:
		a, _ := netip.AddrFromSlice(rest[:n])
		if a.Is4In6() {
			return Reach{}, nil, fmt.Errorf("%w: an IPv4 address sent as IPv6", ErrMalformed)
		}
		r.External = netip.AddrPortFrom(a, binary.BigEndian.Uint16(rest[n:]))
		return r, rest[n+2:], nil
	}
	return Reach{}, nil, fmt.Errorf("%w: reach address of %d bytes with %d left", ErrMalformed, n, len(rest))
}
