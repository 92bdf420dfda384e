// Package jointest holds the settings that make a joining client
// misbehave on purpose, for tests of hosts: announce another protocol
// version or other codecs, send no state hashes. They are kept out of
// join.Config, what a real client sets: a test puts them in the context
// it passes to join.Join, which reads them (so this package sits with
// package join, on its floor, not among the ground utilities).
package jointest

import "context"

// Options are the test-only settings of one join. The zero value is what
// a real client does.
type Options struct {
	// Protocol, if not 0, is announced instead of wire.ProtocolVersion,
	// to test how a host refuses another version.
	Protocol uint32
	// Codecs, if not nil, are the codecs announced in Client_Protocol
	// instead of every one the joiner reads (empty: none, as a protocol 3
	// client, which reads gzip only).
	Codecs []uint8
	// NoHashReports sends no state hashes even when the host asks for
	// them, as a client that never reports (the host then cannot detect
	// its desyncs).
	NoHashReports bool
	// SilentExplain leaves the host's Server_ExplainRequest unanswered,
	// as a slow or hostile player would.
	SilentExplain bool
	// SectionHashSkew, if not 0, is added to the hash of every section
	// named in Client_Username as made: the host must then send those
	// maps whole.
	SectionHashSkew uint64
	// ExtraMade are named in Client_Username as made sections, map ID to
	// hash, whether or not the host offered them.
	ExtraMade map[int32]uint64
}

type key struct{}

// With returns ctx carrying o for join.Join.
func With(ctx context.Context, o Options) context.Context {
	return context.WithValue(ctx, key{}, o)
}

// From returns the options ctx carries, or the zero Options.
func From(ctx context.Context) Options {
	o, _ := ctx.Value(key{}).(Options)
	return o
}
