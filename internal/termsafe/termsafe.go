package termsafe

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// String returns s with every control character except newline and tab
// escaped.
func String(s string) string {
	if clean(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	appendSafe(&b, s)
	return b.String()
}

// clean reports whether s needs no escaping.
func clean(s string) bool {
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if unsafeRune(r, n) {
			return false
		}
		i += n
	}
	return true
}

// unsafeRune reports whether the rune r, encoded in n bytes, must be
// escaped.
func unsafeRune(r rune, n int) bool {
	switch {
	case r == utf8.RuneError && n == 1:
		return true
	case r == '\n' || r == '\t':
		return false
	case r < 0x20 || r == 0x7f || r >= 0x80 && r <= 0x9f:
		return true
	}
	return false
}

func appendSafe(b *strings.Builder, s string) {
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(b, `\x%02x`, s[i])
		case unsafeRune(r, n) && r < 0x100:
			fmt.Fprintf(b, `\x%02x`, r)
		case unsafeRune(r, n):
			fmt.Fprintf(b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
}

// Writer returns a writer that escapes what it passes on to w as String
// does. Each Write is escaped on its own, so a multi-byte character split
// across two writes shows as escapes; fmt and text/tabwriter write whole
// strings.
func Writer(w io.Writer) io.Writer { return &writer{w: w} }

type writer struct{ w io.Writer }

func (sw *writer) Write(p []byte) (int, error) {
	s := string(p)
	if clean(s) {
		return sw.w.Write(p)
	}
	if _, err := io.WriteString(sw.w, String(s)); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Strip returns s without the characters String would escape (control
// characters, newline and tab included, and invalid UTF-8) and without
// the Unicode bidirectional controls that can make a line read backwards
// (U+202A to U+202E, U+2066 to U+2069). A newline or tab becomes a
// space, so the words on either side stay apart. It is for one-line text
// that others will see, such as chat.
func Strip(s string) string {
	if clean(s) && !strings.ContainsAny(s, "\n\t\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069") {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == '\n' || r == '\t':
			b.WriteByte(' ')
		case unsafeRune(r, n), r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}
