// Package codec is the msgpack encoding every lockhost format shares: the
// protocol's packet bodies (package wire), the payload header of a join
// point (package snapshot) and the header and metadata of a save file
// (package saves). It holds the one configured handle and its limits, so
// that a byte on the wire and a byte in a save file are written and read
// by the same rules, and so that snapshot and saves need not import the
// protocol package to encode their own structures.
//
// Encoding uses hashicorp/go-msgpack/v2 with structs as maps keyed by
// field name (or the `codec` tag) and extensions written as such.
// Decoding is bounded: nesting deeper than MaxDepth is an error, and no
// slice or map is pre-allocated beyond MaxInitLen elements on the word of
// a length prefix; longer collections grow only as their elements are
// actually read, so a decoded value is never larger than its input allows.
// Callers still check their own semantic limits (counts, sizes) after
// decoding.
package codec
