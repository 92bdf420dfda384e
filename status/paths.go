package status

import (
	"encoding/binary"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// PathsVersion is the version of a request that also asks the way each
// player's connection came, and of its reply: a ReachVersion reply and
// then the paths trailer (Info.Paths). A host before version 3 drops such
// a request, so Ping sends a ReachVersion and a version 1 request beside
// it.
const PathsVersion = 3

// MaxPathCodes is how many path codes a reply can count: a paths trailer
// has at most this many counts, so its size is bounded whatever codes
// later versions of the host name.
const MaxPathCodes = 16

// pathsMax is the largest paths trailer: the count of counts and
// MaxPathCodes uint16 counts.
const pathsMax = 1 + 2*MaxPathCodes

// MaxPathsReplySize is the size of the largest version 3 reply, and so
// of the largest reply of any version.
const MaxPathsReplySize = MaxReachReplySize + pathsMax

// A version 3 reply, too, is never more than MaxAmplification times the
// request, and fits in 256 bytes.
const (
	_ = uint(MaxAmplification*RequestSize - MaxPathsReplySize)
	_ = uint(256 - MaxPathsReplySize)
)

// pathNames names the path codes this version knows, indexed by code;
// code 0 counts the players whose path has no code here.
var pathNames = [...]string{"other", "lan", "direct", "punched", "turn-udp", "turn-tcp", "turn-tls", "turn"}

// PathCode is the code of the path named name ("lan", "direct",
// "punched", "turn-udp", "turn-tcp", "turn-tls" or "turn", as the host's
// status page says it), or 0 for any other name.
func PathCode(name string) int {
	if i := slices.Index(pathNames[1:], name); i >= 0 {
		return i + 1
	}
	return 0
}

// PathName is the name of path code c: as PathCode takes it, "other" for
// 0, and "path N" for a code this version does not know.
func PathName(c int) string {
	if c >= 0 && c < len(pathNames) {
		return pathNames[c]
	}
	return "path " + strconv.Itoa(c)
}

// Paths counts the players (those Info.Players counts) by the way their
// connection came: Paths[c] players came by path code c (see PathCode).
// Only a PathsVersion reply carries it; other replies decode as all zero.
type Paths [MaxPathCodes]uint16

// Add counts one more player of the path named name, up to the largest
// count a reply carries.
func (p *Paths) Add(name string) {
	if c := PathCode(name); p[c] < 0xffff {
		p[c]++
	}
}

// Total is how many players p counts.
func (p Paths) Total() int {
	n := 0
	for _, c := range p {
		n += int(c)
	}
	return n
}

// Map is p as path name to count, leaving out the paths no player took
// (empty when p counts nobody).
func (p Paths) Map() map[string]int {
	m := map[string]int{}
	for c, n := range p {
		if n > 0 {
			m[PathName(c)] = int(n)
		}
	}
	return m
}

// String is p in words, the most used path first (ties in code order):
// "2 punched, 1 lan, 1 turn-udp"; empty when p counts nobody.
func (p Paths) String() string {
	var codes []int
	for c, n := range p {
		if n > 0 {
			codes = append(codes, c)
		}
	}
	slices.SortStableFunc(codes, func(a, b int) int { return int(p[b]) - int(p[a]) })
	var sb strings.Builder
	for i, c := range codes {
		if i > 0 {
			sb.WriteString(", ")
		}
		fmt.Fprintf(&sb, "%d %s", p[c], PathName(c))
	}
	return sb.String()
}

// appendPaths appends the trailer of a version 3 reply: k, the number of
// counts (the highest code with a player, plus one; 0 with none), then k
// uint16 counts, the count of code 0 first.
func appendPaths(b []byte, p Paths) []byte {
	k := len(p)
	for k > 0 && p[k-1] == 0 {
		k--
	}
	b = append(b, byte(k))
	for _, n := range p[:k] {
		b = binary.BigEndian.AppendUint16(b, n)
	}
	return b
}

// readPaths reads a version 3 reply's paths trailer, which must end the
// reply.
func readPaths(p []byte) (Paths, error) {
	var out Paths
	if len(p) < 1 {
		return out, fmt.Errorf("%w: no paths trailer", ErrMalformed)
	}
	k := int(p[0])
	switch {
	case k > MaxPathCodes:
		return out, fmt.Errorf("%w: %d path counts, max %d", ErrMalformed, k, MaxPathCodes)
	case len(p) != 1+2*k:
		return out, fmt.Errorf("%w: %d path counts in %d bytes", ErrMalformed, k, len(p)-1)
	}
	for c := range k {
		out[c] = binary.BigEndian.Uint16(p[1+2*c:])
	}
	if k > 0 && out[k-1] == 0 {
		return out, fmt.Errorf("%w: the last path count is 0", ErrMalformed)
	}
	return out, nil
}
