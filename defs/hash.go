package defs

import (
	"encoding/binary"

	"github.com/cespare/xxhash/v2"
)

// The canonical encoding is described in doc.go ("Hashes"). Every string
// is written as uvarint(len) followed by its bytes, every count as a
// uvarint, so the encoding is unambiguous.

func appendStr(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func appendNode(b []byte, n *Node) []byte {
	b = appendStr(b, n.Name)
	b = binary.AppendUvarint(b, uint64(len(n.Attrs)))
	for _, a := range n.Attrs {
		b = appendStr(b, a.Name)
		b = appendStr(b, a.Value)
	}
	b = appendStr(b, n.Text)
	b = binary.AppendUvarint(b, uint64(len(n.Children)))
	for _, c := range n.Children {
		b = appendNode(b, c)
	}
	return b
}

// defHash returns the content hash of one resolved def; buf is scratch
// space that is returned for reuse.
func defHash(buf []byte, typ, name string, n *Node) (uint64, []byte) {
	buf = appendStr(buf[:0], typ)
	buf = appendStr(buf, name)
	buf = appendNode(buf, n)
	return xxhash.Sum64(buf), buf
}

// DatabaseHash computes a database hash from its type and its defs' names
// and content hashes; names must be sorted and unique. It is the function
// Set and Manifest use, exposed so that other producers of summaries agree.
func DatabaseHash(typ string, names []string, hashes []uint64) uint64 {
	d := xxhash.New()
	var b []byte
	b = appendStr(b, typ)
	b = binary.AppendUvarint(b, uint64(len(names)))
	_, _ = d.Write(b)
	for i, name := range names {
		b = appendStr(b[:0], name)
		b = binary.LittleEndian.AppendUint64(b, hashes[i])
		_, _ = d.Write(b)
	}
	return d.Sum64()
}
