package defs

import (
	"bytes"
	"fmt"
	"strings"

	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/ianaindex"
	"golang.org/x/text/encoding/unicode"
)

// maxDeclLen bounds how far into a file the XML declaration is looked for.
const maxDeclLen = 1024

// toUTF8 returns an XML file's bytes as UTF-8, as the game reads them: a
// UTF-16 file (little or big endian, recognised by its byte-order mark or
// by "<?" in UTF-16) is decoded; otherwise an XML declaration naming an
// encoding other than UTF-8 or ASCII (ISO-8859-1, windows-1252, …; any
// name the IANA registry knows) decodes the file from it. transcoded
// reports that the declaration no longer describes the bytes returned. A
// UTF-8 byte-order mark is removed.
func toUTF8(data []byte) (out []byte, transcoded bool, err error) {
	var enc encoding.Encoding
	switch {
	case bytes.HasPrefix(data, []byte{0xef, 0xbb, 0xbf}):
		return data[3:], false, nil
	case bytes.HasPrefix(data, []byte{0xff, 0xfe}), bytes.HasPrefix(data, []byte{'<', 0, '?', 0}):
		enc = unicode.UTF16(unicode.LittleEndian, unicode.ExpectBOM)
		if data[0] == '<' {
			enc = unicode.UTF16(unicode.LittleEndian, unicode.IgnoreBOM)
		}
	case bytes.HasPrefix(data, []byte{0xfe, 0xff}), bytes.HasPrefix(data, []byte{0, '<', 0, '?'}):
		enc = unicode.UTF16(unicode.BigEndian, unicode.ExpectBOM)
		if data[0] == 0 {
			enc = unicode.UTF16(unicode.BigEndian, unicode.IgnoreBOM)
		}
	default:
		name := declaredEncoding(data)
		switch strings.ToLower(name) {
		case "", "utf-8", "utf8", "us-ascii", "ascii":
			return data, false, nil
		}
		e, err := ianaindex.IANA.Encoding(name)
		if err != nil || e == nil {
			return nil, false, fmt.Errorf("unsupported encoding %q", name)
		}
		if strings.HasPrefix(strings.ToLower(name), "utf-16") || strings.HasPrefix(strings.ToLower(name), "utf-32") {
			return nil, false, fmt.Errorf("declares encoding %q but has no byte-order mark for it", name)
		}
		enc = e
	}
	out, err = enc.NewDecoder().Bytes(data)
	if err != nil {
		return nil, false, fmt.Errorf("decoding: %w", err)
	}
	if len(out) > maxFileSize {
		return nil, false, fmt.Errorf("larger than %d bytes once decoded", maxFileSize)
	}
	return out, true, nil
}

// declaredEncoding returns the encoding named by the XML declaration at
// the start of data, or "".
func declaredEncoding(data []byte) string {
	if !bytes.HasPrefix(data, []byte("<?xml")) {
		return ""
	}
	head := data[:min(len(data), maxDeclLen)]
	end := bytes.Index(head, []byte("?>"))
	if end < 0 {
		return ""
	}
	decl := head[:end]
	i := bytes.Index(decl, []byte("encoding"))
	if i < 0 {
		return ""
	}
	rest := bytes.TrimLeft(decl[i+len("encoding"):], " \t\r\n")
	if len(rest) == 0 || rest[0] != '=' {
		return ""
	}
	rest = bytes.TrimLeft(rest[1:], " \t\r\n")
	if len(rest) == 0 || (rest[0] != '"' && rest[0] != '\'') {
		return ""
	}
	j := bytes.IndexByte(rest[1:], rest[0])
	if j < 0 {
		return ""
	}
	return strings.TrimSpace(string(rest[1 : 1+j]))
}
