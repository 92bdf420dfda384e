package saves_test

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/lockhost/lockhost/defs"
	"github.com/lockhost/lockhost/internal/codec"
	"github.com/lockhost/lockhost/saves"
	"github.com/lockhost/lockhost/wire"
)

// TestDefSummaryTypesAgree pins the three def-summary types to one
// another: defs.Summary (what loaded content produces), wire.DefSummary
// (a Client_Defs entry) and saves.DefSummary (a save's meta). They convert
// into each other field for field (Go allows that only while names, types
// and order match, so a field added to one side fails to compile here),
// and the two that are encoded with the protocol's codec have the same
// keys, so a save's summaries and a handshake's are the same bytes.
func TestDefSummaryTypesAgree(t *testing.T) {
	d := defs.Summary{Type: "ThingDef", Count: 120, Hash: 0xdeadbeefcafef00d}
	w := wire.DefSummary(d)
	s := saves.DefSummary(w)
	if back := defs.Summary(s); back != d {
		t.Fatalf("round trip through the three types: %+v, want %+v", back, d)
	}

	types := []reflect.Type{reflect.TypeFor[defs.Summary](), reflect.TypeFor[wire.DefSummary](), reflect.TypeFor[saves.DefSummary]()}
	for _, rt := range types[1:] {
		if rt.NumField() != types[0].NumField() {
			t.Fatalf("%s has %d fields, %s %d", rt, rt.NumField(), types[0], types[0].NumField())
		}
		for i := range rt.NumField() {
			a, b := types[0].Field(i), rt.Field(i)
			if a.Name != b.Name || a.Type != b.Type {
				t.Errorf("field %d: %s %s in %s, %s %s in %s", i, a.Name, a.Type, types[0], b.Name, b.Type, rt)
			}
		}
	}
	wt, st := types[1], types[2]
	for i := range wt.NumField() {
		if wk, sk := wt.Field(i).Tag.Get("codec"), st.Field(i).Tag.Get("codec"); wk != sk {
			t.Errorf("%s: codec key %q in the protocol, %q in saves", wt.Field(i).Name, wk, sk)
		}
	}
	wb, err := codec.Encode(w)
	if err != nil {
		t.Fatal(err)
	}
	sb, err := codec.Encode(s)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(wb, sb) {
		t.Fatalf("encodings differ: protocol %x, save %x", wb, sb)
	}
}
