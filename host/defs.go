package host

import (
	"slices"
	"strings"

	"github.com/lockhost/lockhost/defs"
	"github.com/lockhost/lockhost/internal/codec"
	"github.com/lockhost/lockhost/status"
	"github.com/lockhost/lockhost/wire"
)

// compareDefs checks the client's databases against the host's. It returns
// one status per client database, in the client's order, followed by
// StatusMissing for each host database the client did not declare (in the
// host's order, as long as the statuses stay within wire.MaxDatabases),
// and the types that differ, the undeclared host databases included.
func compareDefs(host []defs.Summary, client []wire.DefSummary) (statuses []uint8, bad []string) {
	cs := make([]defs.Summary, len(client))
	declared := make(map[string]bool, len(client))
	for i, d := range client {
		cs[i] = defs.Summary{Type: d.Type, Count: d.Count, Hash: d.Hash}
		declared[d.Type] = true
	}
	st := defs.Compare(host, cs)
	statuses = make([]uint8, len(st))
	for i, s := range st {
		statuses[i] = uint8(s)
		if s != defs.StatusOK {
			bad = append(bad, client[i].Type)
		}
	}
	for _, h := range host {
		if !declared[h.Type] && len(statuses) < wire.MaxDatabases {
			statuses = append(statuses, uint8(defs.StatusMissing))
		}
		if !declared[h.Type] {
			bad = append(bad, h.Type)
		}
	}
	return statuses, bad
}

// announcedDatabases is the host's def databases as Server_ModList
// lists them, sorted by type, so a client learns what to declare before
// it is refused. A list a client could not declare within the protocol's
// limits (too many databases, a type name too long) is not announced at
// all: such a client is refused whatever it sends, and the refusal's
// detail still names the databases.
func announcedDatabases(dbs []defs.Summary) []wire.DefSummary {
	if len(dbs) > wire.MaxDatabases {
		return nil
	}
	out := make([]wire.DefSummary, len(dbs))
	for i, d := range dbs {
		if d.Type == "" || len(d.Type) > wire.MaxTypeNameBytes {
			return nil
		}
		out[i] = wire.DefSummary{Type: d.Type, Count: d.Count, Hash: d.Hash}
	}
	slices.SortStableFunc(out, func(a, b wire.DefSummary) int { return strings.Compare(a.Type, b.Type) })
	return out
}

// declaredDatabases counts the entries of a Client_Defs body without
// decoding them (each entry is skipped into an empty struct, which
// allocates nothing), so an oversized list is refused cheaply. A body
// that does not decode counts 0: the real decode reports it.
func declaredDatabases(body []byte) int {
	var v struct {
		Databases []struct{} `codec:"d"`
	}
	if err := codec.Decode(body, &v); err != nil {
		return 0
	}
	return len(v.Databases)
}

// hostDefs is the def databases joiners must match, with what the
// handshake and the status query derive from them. It does not change
// once made: a relay session that takes its arbiter's declaration
// stores a new one (relaydefs.go).
type hostDefs struct {
	content Content
	// hash is status.SummaryHash of content.Databases, for status
	// replies.
	hash uint64
	// announced is content.Databases as Server_ModList lists them.
	announced []wire.DefSummary
	// awaiting: a relay session whose databases are its arbiter's
	// declaration, which it has not taken yet. Nothing is compared: each
	// joiner's Client_Defs is kept for its admission (relaydefs.go).
	awaiting bool
}

// newHostDefs is the host's def databases from content.
func newHostDefs(content Content) *hostDefs {
	return &hostDefs{content: content, hash: status.SummaryHash(content.Databases), announced: announcedDatabases(content.Databases)}
}
