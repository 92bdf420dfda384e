package snapshot

import (
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func TestParseCompression(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Compression
		ok   bool
	}{
		{"zstd", Compression{Codec: Zstd}, true},
		{"gzip", Compression{Codec: Gzip}, true},
		{"gzip:6", Compression{Codec: Gzip, Level: 6}, true},
		{"zstd:10", Compression{Codec: Zstd, Level: 10}, true},
		{"gzip:-2", Compression{Codec: Gzip, Level: -2}, true},
		{"gzip:10", Compression{}, false},
		{"gzip:-4", Compression{}, false},
		{"zstd:23", Compression{}, false},
		{"zstd:", Compression{}, false},
		{"zstd:fast", Compression{}, false},
		{"lzma:3", Compression{}, false},
		{"", Compression{}, false},
	} {
		got, err := ParseCompression(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("ParseCompression(%q) = %+v, %v; want %+v, ok %v", tc.in, got, err, tc.want, tc.ok)
		}
	}
	// What String writes, ParseCompression reads back.
	for c := range codecs {
		want := Compression{Codec: c, Level: codecs[c].defaultLevel}
		if got, err := ParseCompression(want.String()); err != nil || got != want {
			t.Errorf("ParseCompression(%q) = %+v, %v", want.String(), got, err)
		}
	}
	if got := CodecNames(); got != "zstd or gzip" {
		t.Errorf("CodecNames() = %q", got)
	}
}

// TestSpecNamesEveryCodec holds the wire spec's codec list (section 8.1,
// "**0 gzip**") to the codecs this package knows, both ways, and Readable
// to the same set: a new codec is its entry here and its line there.
func TestSpecNamesEveryCodec(t *testing.T) {
	spec, err := os.ReadFile("../docs/protocol.md")
	if err != nil {
		t.Fatal(err)
	}
	start := strings.Index(string(spec), "### 8.1 ")
	end := strings.Index(string(spec), "### 8.2 ")
	if start < 0 || end < start {
		t.Fatal("docs/protocol.md has no section 8.1 before 8.2")
	}
	listed := map[Codec]string{}
	for _, m := range regexp.MustCompile(`\*\*(\d+) ([a-z0-9]+)\*\*`).FindAllStringSubmatch(string(spec[start:end]), -1) {
		n, err := strconv.Atoi(m[1])
		if err != nil || n > 255 {
			t.Fatalf("codec number %q in the spec", m[1])
		}
		listed[Codec(n)] = m[2]
	}
	for c, impl := range codecs {
		if listed[c] != impl.name {
			t.Errorf("codec %d %q: the spec's section 8.1 names it %q", c, impl.name, listed[c])
		}
	}
	for c, name := range listed {
		if !c.Known() {
			t.Errorf("the spec names codec %d %q, which this package does not know", c, name)
		}
	}
	readable := Readable()
	for c := range codecs {
		if !slices.Contains(readable, c) {
			t.Errorf("Readable() leaves out %s", c)
		}
	}
	if len(readable) != len(codecs) {
		t.Errorf("Readable() = %v, want each of the %d codecs once", readable, len(codecs))
	}
}
