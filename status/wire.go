package status

import (
	"encoding/binary"
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/cespare/xxhash/v2"

	"github.com/lockhost/lockhost/defs"
)

// Version is the wire format version this package speaks.
const Version = 1

const (
	// RequestSize is the exact size of a request datagram.
	RequestSize = 128
	// MaxAmplification bounds a reply's size as a multiple of the request's.
	MaxAmplification = 2
	// MaxString is the longest GameName or GameVersion, in bytes.
	MaxString = 64

	replyFixed = 42 // magic, version, pingID and the fixed-size fields

	// MinReplySize is the size of a reply with two empty strings.
	MinReplySize = replyFixed + 2
	// MaxReplySize is the size of a reply with two MaxString-byte strings.
	MaxReplySize = MinReplySize + 2*MaxString
)

// A reply never exceeds MaxAmplification times the request, and always
// fits in 256 bytes: either constant below overflows uint (a compile
// error) if that stops being true.
const (
	_ = uint(MaxAmplification*RequestSize - MaxReplySize)
	_ = uint(256 - MaxReplySize)
)

const (
	requestMagic = "LHPQ"
	replyMagic   = "LHPR"

	flagPassword = 1 << 0
	flagTLS      = 1 << 1
)

// ErrMalformed is wrapped by every error DecodeReply returns.
var ErrMalformed = errors.New("status: malformed reply")

// Info is what a status reply carries.
type Info struct {
	Players, MaxPlayers   int32  // both >= 0
	GameName, GameVersion string // each at most MaxString bytes of UTF-8
	Protocol              uint32
	Tick                  uint64
	Password              bool
	TLS                   bool   // the game port speaks TLS only
	Databases             int32  // how many def databases, >= 0
	DefsHash              uint64 // DefsHash over every database, in order
	// Reach is how the host is reached from the internet; only a
	// ReachVersion reply carries it (a version 1 reply decodes as the
	// zero Reach, MappingUnknown).
	Reach Reach
	// Paths counts the players by the way their connection came; only a
	// PathsVersion reply carries it (other replies decode as all zero).
	Paths Paths
}

// Validate reports whether i can be encoded as is.
func (i Info) Validate() error {
	switch {
	case i.Players < 0:
		return fmt.Errorf("status: negative Players %d", i.Players)
	case i.MaxPlayers < 0:
		return fmt.Errorf("status: negative MaxPlayers %d", i.MaxPlayers)
	case i.Databases < 0:
		return fmt.Errorf("status: negative Databases %d", i.Databases)
	}
	if err := checkString("GameName", i.GameName); err != nil {
		return err
	}
	return checkString("GameVersion", i.GameVersion)
}

func checkString(field, s string) error {
	if len(s) > MaxString {
		return fmt.Errorf("status: %s is %d bytes, max %d", field, len(s), MaxString)
	}
	if !utf8.ValidString(s) {
		return fmt.Errorf("status: %s is not valid UTF-8", field)
	}
	return nil
}

// DefsHash is the hash Info.DefsHash carries: one xxhash64 over every def
// database's type, def count and database hash, in the order given (use
// the order defs.Set.Summary returns). Each database is encoded as
// uvarint(len(type)) | type | count int32 BE | hash uint64 BE; entries are
// self-delimiting, so the concatenation is unambiguous. The three slices
// must have the same length; DefsHash panics otherwise.
func DefsHash(types []string, counts []int32, hashes []uint64) uint64 {
	if len(counts) != len(types) || len(hashes) != len(types) {
		panic(fmt.Sprintf("status.DefsHash: %d types, %d counts, %d hashes", len(types), len(counts), len(hashes)))
	}
	d := xxhash.New()
	var b []byte
	for i, t := range types {
		b = appendDefsEntry(b[:0], t, counts[i], hashes[i])
		_, _ = d.Write(b)
	}
	return d.Sum64()
}

// SummaryHash is DefsHash over summaries' types, counts and hashes, in
// the order given (the order defs.Set.Summary returns).
func SummaryHash(summaries []defs.Summary) uint64 {
	d := xxhash.New()
	var b []byte
	for _, s := range summaries {
		b = appendDefsEntry(b[:0], s.Type, s.Count, s.Hash)
		_, _ = d.Write(b)
	}
	return d.Sum64()
}

// appendDefsEntry appends one database's encoding in DefsHash to b.
func appendDefsEntry(b []byte, typ string, count int32, hash uint64) []byte {
	b = binary.AppendUvarint(b, uint64(len(typ)))
	b = append(b, typ...)
	b = binary.BigEndian.AppendUint32(b, uint32(count))
	return binary.BigEndian.AppendUint64(b, hash)
}

// AppendRequest appends a request carrying pingID to b.
func AppendRequest(b []byte, pingID uint32) []byte {
	return AppendRequestVersion(b, pingID, Version)
}

// AppendRequestVersion appends a request of version v (Version,
// ReachVersion or PathsVersion) carrying pingID to b.
func AppendRequestVersion(b []byte, pingID uint32, v byte) []byte {
	b = append(b, requestMagic...)
	b = append(b, v)
	b = binary.BigEndian.AppendUint32(b, pingID)
	var pad [RequestSize - 9]byte
	return append(b, pad[:]...)
}

// ParseRequest returns the ping ID of a well-formed version 1 request:
// exactly RequestSize bytes, right magic and version, all-zero padding.
func ParseRequest(p []byte) (pingID uint32, ok bool) {
	id, v, ok := ParseRequestVersion(p)
	return id, ok && v == Version
}

// ParseRequestVersion returns the ping ID and version of a well-formed
// request of any version this package speaks (Version, ReachVersion,
// PathsVersion).
func ParseRequestVersion(p []byte) (pingID uint32, version byte, ok bool) {
	if len(p) != RequestSize || string(p[:4]) != requestMagic || !knownVersion(p[4]) {
		return 0, 0, false
	}
	for _, c := range p[9:] {
		if c != 0 {
			return 0, 0, false
		}
	}
	return binary.BigEndian.Uint32(p[5:9]), p[4], true
}

// AppendReply appends a version 1 reply to pingID carrying info to b. It
// refuses an info that fails Validate, so the appended reply is never
// more than MaxReplySize bytes.
func AppendReply(b []byte, pingID uint32, info Info) ([]byte, error) {
	return AppendReplyVersion(b, pingID, info, Version)
}

// knownVersion says whether v is a version this package speaks.
func knownVersion(v byte) bool {
	return v == Version || v == ReachVersion || v == PathsVersion
}

// AppendReplyVersion appends a reply of version v to pingID: version 1;
// ReachVersion, which adds info.Reach (at most MaxReachReplySize bytes in
// all); or PathsVersion, which adds info.Reach and then info.Paths (at
// most MaxPathsReplySize bytes).
func AppendReplyVersion(b []byte, pingID uint32, info Info, v byte) ([]byte, error) {
	if err := info.Validate(); err != nil {
		return b, err
	}
	if !knownVersion(v) {
		return b, fmt.Errorf("status: reply version %d", v)
	}
	b = append(b, replyMagic...)
	b = append(b, v)
	b = binary.BigEndian.AppendUint32(b, pingID)
	b = binary.BigEndian.AppendUint32(b, uint32(info.Players))
	b = binary.BigEndian.AppendUint32(b, uint32(info.MaxPlayers))
	b = binary.BigEndian.AppendUint32(b, info.Protocol)
	b = binary.BigEndian.AppendUint64(b, info.Tick)
	var flags byte
	if info.Password {
		flags |= flagPassword
	}
	if info.TLS {
		flags |= flagTLS
	}
	b = append(b, flags)
	b = binary.BigEndian.AppendUint32(b, uint32(info.Databases))
	b = binary.BigEndian.AppendUint64(b, info.DefsHash)
	b = append(b, byte(len(info.GameName)))
	b = append(b, info.GameName...)
	b = append(b, byte(len(info.GameVersion)))
	b = append(b, info.GameVersion...)
	if v >= ReachVersion {
		b = appendReach(b, info.Reach)
	}
	if v >= PathsVersion {
		b = appendPaths(b, info.Paths)
	}
	return b, nil
}

// DecodeReply parses a reply datagram. It refuses (with an error wrapping
// ErrMalformed) anything that AppendReply would not have produced.
func DecodeReply(p []byte) (pingID uint32, info Info, err error) {
	bad := func(format string, args ...any) (uint32, Info, error) {
		return 0, Info{}, fmt.Errorf("%w: "+format, append([]any{ErrMalformed}, args...)...)
	}
	if len(p) < MinReplySize || len(p) > MaxPathsReplySize {
		return bad("%d bytes, want %d to %d", len(p), MinReplySize, MaxPathsReplySize)
	}
	if string(p[:4]) != replyMagic {
		return bad("wrong magic %q", p[:4])
	}
	version := p[4]
	if !knownVersion(version) {
		return bad("version %d, want %d to %d", version, Version, PathsVersion)
	}
	be := binary.BigEndian
	pingID = be.Uint32(p[5:])
	info.Players = int32(be.Uint32(p[9:]))
	info.MaxPlayers = int32(be.Uint32(p[13:]))
	info.Protocol = be.Uint32(p[17:])
	info.Tick = be.Uint64(p[21:])
	flags := p[29]
	info.Databases = int32(be.Uint32(p[30:]))
	info.DefsHash = be.Uint64(p[34:])
	if flags&^(flagPassword|flagTLS) != 0 {
		return bad("reserved flag bits %#02x", flags)
	}
	info.Password = flags&flagPassword != 0
	info.TLS = flags&flagTLS != 0

	rest := p[replyFixed:]
	var ok bool
	if info.GameName, rest, ok = readString(rest); !ok {
		return bad("game name length")
	}
	if info.GameVersion, rest, ok = readString(rest); !ok {
		return bad("game version length")
	}
	if version >= ReachVersion {
		if info.Reach, rest, err = readReach(rest); err != nil {
			return 0, Info{}, err
		}
	}
	if version >= PathsVersion {
		if info.Paths, err = readPaths(rest); err != nil {
			return 0, Info{}, err
		}
		rest = nil
	}
	if len(rest) != 0 {
		return bad("%d trailing bytes", len(rest))
	}
	if err := info.Validate(); err != nil {
		return bad("%v", err)
	}
	return pingID, info, nil
}

// readString reads a u8-length-prefixed string of at most MaxString bytes.
func readString(p []byte) (s string, rest []byte, ok bool) {
	if len(p) < 1 {
		return "", p, false
	}
	n := int(p[0])
	if n > MaxString || len(p) < 1+n {
		return "", p, false
	}
	return string(p[1 : 1+n]), p[1+n:], true
}
