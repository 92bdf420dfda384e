package modsync

import (
	"bytes"
	"testing"
)

// FuzzDecode: no input makes Decode panic or accept a manifest with an
// unsafe path, and what it accepts encodes to bytes that decode to the
// same manifest again.
func FuzzDecode(f *testing.F) {
	a := fakeFile("Textures/a.png", []byte("a"))
	b := fakeFile("Defs/b.xml", []byte("<Defs/>"))
	b.Kind, b.Databases = KindDefs, []string{"ThingDef"}
	held := fakeManifest()
	held.Mods = append(held.Mods, Mod{PackageID: "held.mod", Held: true, NotShared: []NotShared{{Path: "Assemblies/x.dll", Size: 3, Reason: "code"}}})
	for _, m := range []*Manifest{fakeManifest(), fakeManifest(b, a), held, fakeManifest(fakeFile("../x", nil))} {
		enc, err := m.Encode()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(enc)
	}
	f.Add([]byte{0x81, 0xa1, 'm', 0xdd, 0xff, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := Decode(data, DefaultLimits)
		if err != nil {
			return
		}
		for _, d := range m.Mods {
			if err := checkLayout(&d); err != nil {
				t.Fatalf("accepted a mod whose view is unsafe: %v", err)
			}
		}
		enc, err := m.Encode()
		if err != nil {
			t.Fatal(err)
		}
		again, err := Decode(enc, DefaultLimits)
		if err != nil {
			t.Fatalf("re-encoded manifest refused: %v", err)
		}
		enc2, _ := again.Encode()
		if !bytes.Equal(enc, enc2) {
			t.Fatal("re-encoding is not stable")
		}
	})
}
