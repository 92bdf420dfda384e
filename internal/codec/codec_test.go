package codec

import (
	"bytes"
	"encoding/hex"
	"strings"
	"testing"
)

// sample has the shapes the formats use: tagged keys, an unsigned
// integer, bytes, a string and a list.
type sample struct {
	N    uint64   `codec:"n"`
	B    []byte   `codec:"b"`
	S    string   `codec:"s"`
	List []string `codec:"l"`
}

func TestEncodePinsBytes(t *testing.T) {
	// Save files and the wire depend on these exact bytes: structs as maps
	// keyed by tag in the library's order (sorted by key), the smallest
	// integer width, bytes as bin (WriteExt), strings as str, nil as nil.
	tests := []struct {
		name string
		v    any
		want string
	}{
		{"struct", &sample{N: 5, B: []byte{1, 2}, S: "hi", List: []string{"x"}},
			"84" + "a162c4020102" + "a16c91a178" + "a16e05" + "a173a26869"},
		{"zero struct", &sample{}, "84" + "a162c0" + "a16cc0" + "a16e00" + "a173a0"},
		{"big uint", uint64(1) << 40, "cf0000010000000000"},
		{"negative", int64(-4), "fc"},
	}
	for _, tc := range tests {
		got, err := Encode(tc.v)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if h := hex.EncodeToString(got); h != tc.want {
			t.Errorf("%s: encoded %s, want %s", tc.name, h, tc.want)
		}
	}
}

func TestDecode(t *testing.T) {
	good, err := Encode(&sample{N: 7, B: []byte("abc"), S: "s", List: []string{"a", "b"}})
	if err != nil {
		t.Fatal(err)
	}
	nested := bytes.Repeat([]byte{0x91}, MaxDepth+2) // lists in lists
	nested = append(nested, 0x01)
	tests := []struct {
		name    string
		in      []byte
		wantErr string
	}{
		{"whole value", good, ""},
		{"trailing bytes", append(append([]byte{}, good...), 0xc0, 0xc0), "2 trailing bytes"},
		{"nil body", nil, "decode"},
		{"empty body", []byte{}, "decode"},
		{"truncated", good[:len(good)-1], "decode"},
		{"too deep", nested, "decode"},
		// A list header claiming 2^32-1 strings with none behind it must
		// fail on the missing data, not allocate for the claim.
		{"huge claimed list", []byte{0x81, 0xa1, 'l', 0xdd, 0xff, 0xff, 0xff, 0xff}, "decode"},
		{"huge claimed bytes", []byte{0x81, 0xa1, 'b', 0xc6, 0x7f, 0xff, 0xff, 0xff}, "decode"},
	}
	for _, tc := range tests {
		var v sample
		err := Decode(tc.in, &v)
		switch {
		case tc.wantErr == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
			t.Errorf("%s: err %v, want one containing %q", tc.name, err, tc.wantErr)
		}
		if tc.wantErr == "" && (v.N != 7 || string(v.B) != "abc" || v.S != "s" || len(v.List) != 2) {
			t.Errorf("%s: decoded %+v", tc.name, v)
		}
	}
}

func TestDecodeDoesNotAlias(t *testing.T) {
	in, err := Encode(&sample{B: []byte("keep")})
	if err != nil {
		t.Fatal(err)
	}
	var v sample
	if err := Decode(in, &v); err != nil {
		t.Fatal(err)
	}
	for i := range in {
		in[i] = 0
	}
	if string(v.B) != "keep" {
		t.Fatalf("decoded bytes changed with the input: %q", v.B)
	}
}

func TestDecodePrefix(t *testing.T) {
	first, err := Encode(&sample{N: 1, S: "first"})
	if err != nil {
		t.Fatal(err)
	}
	in := append(append([]byte{}, first...), 0xde, 0xad)
	var v sample
	n, err := DecodePrefix(in, &v)
	if err != nil || n != len(first) || v.S != "first" {
		t.Fatalf("DecodePrefix = %d, %v (%+v), want %d", n, err, v, len(first))
	}
	if n, err := DecodePrefix(first[:3], &v); err == nil {
		t.Fatalf("truncated value decoded (%d bytes)", n)
	}
}

// A decoder reused from the pool must not carry state from a failed
// decode into the next one.
func TestDecoderReuseAfterError(t *testing.T) {
	good, err := Encode(&sample{N: 3})
	if err != nil {
		t.Fatal(err)
	}
	for range 50 {
		var bad sample
		if Decode([]byte{0x81, 0xa1}, &bad) == nil {
			t.Fatal("truncated input decoded")
		}
		var v sample
		if err := Decode(good, &v); err != nil || v.N != 3 {
			t.Fatalf("after an error: %v, %+v", err, v)
		}
	}
}

func FuzzDecode(f *testing.F) {
	for _, v := range []any{&sample{N: 1, B: []byte{9}, S: "x", List: []string{"y"}}, &sample{}} {
		b, err := Encode(v)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		var v sample
		if err := Decode(in, &v); err != nil {
			return
		}
		// What decodes must encode and decode back to the same value.
		out, err := Encode(&v)
		if err != nil {
			t.Fatalf("re-encode: %v", err)
		}
		var w sample
		if err := Decode(out, &w); err != nil {
			t.Fatalf("decode of re-encoded: %v", err)
		}
		if w.N != v.N || !bytes.Equal(w.B, v.B) || w.S != v.S || strings.Join(w.List, "\x00") != strings.Join(v.List, "\x00") || len(w.List) != len(v.List) {
			t.Fatalf("round trip changed %+v to %+v", v, w)
		}
	})
}
