package defs

import (
	"fmt"
	"math"
)

// Summary is what a client sends the host for one database: its type,
// number of defs and hash.
type Summary struct {
	Type  string `codec:"type" json:"type"`
	Count int32  `codec:"count" json:"count"`
	Hash  uint64 `codec:"hash" json:"hash"`
}

// Summary returns one entry per database, sorted by Type.
func (s *Set) Summary() []Summary {
	out := make([]Summary, len(s.Databases))
	for i, db := range s.Databases {
		out[i] = Summary{Type: db.Type, Count: clampCount(len(db.Defs)), Hash: db.Hash}
	}
	return out
}

func clampCount(n int) int32 {
	if n > math.MaxInt32 {
		return math.MaxInt32
	}
	return int32(n)
}

// Status is the host's verdict on one of the client's databases.
type Status uint8

// The statuses, with the numbers used on the wire.
const (
	StatusOK        Status = 0 // same type, count and hash
	StatusNotFound  Status = 1 // the host has no database of that type
	StatusCountDiff Status = 2 // the number of defs differs
	StatusHashDiff  Status = 3 // same count, different names or content
	// StatusMissing is a host database the client did not declare. It
	// follows the statuses of the declared databases, one per such host
	// database in the host's order.
	StatusMissing Status = 4
)

// String returns a short lower-case name for the status.
func (s Status) String() string {
	switch s {
	case StatusOK:
		return "ok"
	case StatusNotFound:
		return "not found"
	case StatusCountDiff:
		return "count differs"
	case StatusHashDiff:
		return "hash differs"
	case StatusMissing:
		return "missing"
	}
	return fmt.Sprintf("status(%d)", uint8(s))
}

// Compare checks the client's databases against the host's and returns one
// status per client entry, in client order. If host lists a type twice,
// its first entry counts.
func Compare(host []Summary, client []Summary) []Status {
	byType := make(map[string]Summary, len(host))
	for _, h := range host {
		if _, dup := byType[h.Type]; !dup {
			byType[h.Type] = h
		}
	}
	out := make([]Status, len(client))
	for i, c := range client {
		h, ok := byType[c.Type]
		switch {
		case !ok:
			out[i] = StatusNotFound
		case h.Count != c.Count:
			out[i] = StatusCountDiff
		case h.Hash != c.Hash:
			out[i] = StatusHashDiff
		default:
			out[i] = StatusOK
		}
	}
	return out
}

// AllOK reports whether every status is StatusOK.
func AllOK(st []Status) bool {
	for _, s := range st {
		if s != StatusOK {
			return false
		}
	}
	return true
}
