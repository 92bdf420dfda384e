package termsafe

import (
	"bytes"
	"fmt"
	"testing"
)

func TestString(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"plain text", "plain text"},
		{"lines\nand\ttabs", "lines\nand\ttabs"},
		{"Ünïcödé and 漢字", "Ünïcödé and 漢字"},
		{"\x1b[2J\x1b]0;owned\x07", `\x1b[2J\x1b]0;owned\x07`},
		{"carriage\rreturn", `carriage\x0dreturn`},
		{"del\x7f", `del\x7f`},
		{"c1 \u009b31m", `c1 \x9b31m`},
		{"bad \xff utf8", `bad \xff utf8`},
		{"", ""},
	} {
		if got := String(tc.in); got != tc.want {
			t.Errorf("String(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestWriter(t *testing.T) {
	var buf bytes.Buffer
	w := Writer(&buf)
	n, err := fmt.Fprintf(w, "Player:\t%s\n", "Eve\x1b[31m")
	if err != nil || n != len("Player:\tEve\x1b[31m\n") {
		t.Fatalf("Write = %d, %v: must report the caller's bytes", n, err)
	}
	if want := "Player:\tEve\\x1b[31m\n"; buf.String() != want {
		t.Fatalf("wrote %q, want %q", buf.String(), want)
	}
}

func TestStrip(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"hello", "hello"},
		{"héllo wörld", "héllo wörld"},
		{"a\x1b[2Jb", "a[2Jb"},
		{"line\nbreak\ttab", "line break tab"},
		{"bell\x07 del\x7f c1\u0085", "bell del c1"},
		{"bad\xffutf8", "badutf8"},
		{"abc\u202edcba", "abcdcba"},
		{"\u2066iso\u2069", "iso"},
	} {
		if got := Strip(tc.in); got != tc.want {
			t.Errorf("Strip(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
