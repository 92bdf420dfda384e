package modsync

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestManifestListsRealAndSyntheticMods: a real mod's files the game
// reads at 1.5 are listed with their hashes and databases; a synthetic
// mod's data of every kind is listed and its code, by extension, folder
// or executable header, and its link are "not shared".
func TestManifestListsRealAndSyntheticMods(t *testing.T) {
	synth := synthMod(t, t.TempDir(), "test.synth")
	m := build(t, BuildOptions{}, allowTool, synth)
	if len(m.Mods) != 2 || m.Mods[0].PackageID != "UnlimitedHugs.AllowTool" || m.Mods[1].PackageID != "test.synth" || m.GameVersion != gameVersion {
		t.Fatalf("mods %+v", m.Mods)
	}
	at := m.Mods[0]
	if !slices.Equal(at.Folders, []string{".", "v1.5"}) || len(at.NotShared) != 0 {
		t.Errorf("AllowTool folders %v, not shared %v", at.Folders, at.NotShared)
	}
	want := []string{"About/About.xml", "Defs/JobDefs/AllowToolJobs.xml", "LoadFolders.xml", "v1.5/Defs/WorkTypeDefs/AllowToolWorkTypes.xml"}
	for _, p := range want {
		if modFile(m, at.PackageID, p) == nil {
			t.Errorf("AllowTool lacks %s", p)
		}
	}
	for _, f := range at.Files {
		if has(f.Path, "v1.3/") || has(f.Path, "v1.4/") {
			t.Errorf("AllowTool lists %s, which the game does not read at %s", f.Path, gameVersion)
		}
		data, err := os.ReadFile(filepath.Join(allowTool, f.Path))
		if err != nil || int64(len(data)) != f.Size || sumOf(data) != f.Hash {
			t.Errorf("%s: size %d hash %s do not match the file (%v)", f.Path, f.Size, f.Hash, err)
		}
	}
	if len(at.Files) != 16 {
		t.Errorf("AllowTool: %d files, want 16", len(at.Files))
	}
	if f := modFile(m, at.PackageID, "Defs/JobDefs/AllowToolJobs.xml"); f == nil || f.Kind != KindDefs || !slices.Equal(f.Databases, []string{"JobDef"}) {
		t.Errorf("AllowToolJobs.xml: %+v", f)
	}
	checkSynth(t, m)
	t.Logf("AllowTool: %d files, %d bytes; synth: %d files, %d bytes, %d not shared", len(at.Files), at.Size(), len(m.Mods[1].Files), m.Mods[1].Size(), len(m.Mods[1].NotShared))
}

func checkSynth(t *testing.T, m *Manifest) {
	t.Helper()
	kinds := map[string]Kind{
		"About/About.xml": KindAbout, "About/Preview.png": KindAbout, "Defs/Things.xml": KindDefs,
		"1.5/Defs/Five.xml": KindDefs, "Patches/Lamp.xml": KindPatches, "Languages/English/Keyed/Synth.xml": KindLanguages,
		"Textures/Things/Lamp.png": KindTexture, "Sounds/Hum.ogg": KindSound,
	}
	d := m.Mod("test.synth")
	if len(d.Files) != len(kinds) {
		t.Errorf("synth lists %d files, want %d: %+v", len(d.Files), len(kinds), d.Files)
	}
	for p, k := range kinds {
		if f := modFile(m, "test.synth", p); f == nil || f.Kind != k {
			t.Errorf("synth %s: %+v, want kind %s", p, f, k)
		}
	}
	if f := modFile(m, "test.synth", "Defs/Things.xml"); f == nil || !slices.Equal(f.Databases, []string{"RecipeDef", "ThingDef"}) {
		t.Errorf("Things.xml databases: %+v", f)
	}
	for p, why := range map[string]string{
		"Assemblies/Synth.dll":       "code",
		"Textures/Things/Sneaky.png": "ELF",
		"Textures/Things/helper.py":  ".py",
		"Textures/Things/Link.png":   "link",
	} {
		if got := notShared(m, "test.synth", p); !has(got, why) {
			t.Errorf("%s not shared for %q, want a reason with %q", p, got, why)
		}
	}
	for _, p := range []string{"Source/Main.cs", "Readme.txt", "1.6/Defs/Six.xml"} {
		if modFile(m, "test.synth", p) != nil || notShared(m, "test.synth", p) != "" {
			t.Errorf("%s is listed, but the game does not read it", p)
		}
	}
}

// TestHeldBackMod: a mod in Except is listed without files, and the
// handler serves none of its files.
func TestHeldBackMod(t *testing.T) {
	synth := synthMod(t, t.TempDir(), "test.synth")
	all := build(t, BuildOptions{}, allowTool, synth)
	m := build(t, BuildOptions{Except: []string{"TEST.Synth"}}, allowTool, synth)
	d := m.Mod("test.synth")
	if !d.Held || len(d.Files) != 0 || len(m.Mod("UnlimitedHugs.AllowTool").Files) != 16 {
		t.Fatalf("held back mod: %+v", d)
	}
	h := serve(t, m)
	f := modFile(all, "test.synth", "Textures/Things/Lamp.png")
	if code := get(t, URL(h.srv.URL, f.Hash)); code != 404 {
		t.Errorf("a held-back mod's file: %d, want 404", code)
	}
	lines := Compare(m, nil)
	if lines[1].State != HeldBack || !has(lines[1].String(), "does not share") {
		t.Errorf("line %q", lines[1])
	}
}

// TestEncodeDeterministic: one manifest, one encoding, whatever the
// order its files were found or hashed in; decoding gives it back, and its hash is
// the SHA-256 of the encoding.
func TestEncodeDeterministic(t *testing.T) {
	synth := synthMod(t, t.TempDir(), "test.synth")
	m := build(t, BuildOptions{}, allowTool, synth)
	a, err := m.Encode()
	if err != nil {
		t.Fatal(err)
	}
	shuffled := *m
	shuffled.Mods = slices.Clone(m.Mods)
	d := &shuffled.Mods[0]
	d.Files = slices.Clone(d.Files)
	slices.Reverse(d.Files)
	sortMod(d)
	b, _ := shuffled.Encode()
	if !bytes.Equal(a, b) {
		t.Error("the same manifest encodes to other bytes")
	}
	got, err := Decode(a, DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	c, _ := got.Encode()
	if !bytes.Equal(a, c) {
		t.Error("a decoded manifest encodes to other bytes")
	}
	for _, workers := range []int{1, 5} {
		if w := mustEncode(t, build(t, BuildOptions{Workers: workers}, allowTool, synth)); !bytes.Equal(a, w) {
			t.Errorf("hashed on %d goroutines: another manifest", workers)
		}
	}
	h1, _ := m.Hash()
	if h1 != sumOf(a) {
		t.Error("hash is not the SHA-256 of the encoding")
	}
	t.Logf("manifest of 2 mods, %d files: %d bytes", len(m.Mods[0].Files)+len(m.Mods[1].Files), len(a))
}

// TestCompareLines: one line per mod the joiner lacks or has in another
// version; the 2021 copy of the real mod shares its Defs (and, by
// content, its version folder's) with the 2025 one, so only About.xml
// and LoadFolders.xml are missing.
func TestCompareLines(t *testing.T) {
	synth := synthMod(t, t.TempDir(), "test.synth")
	hostM := build(t, BuildOptions{}, allowTool, synth)
	local := build(t, BuildOptions{}, allowTool2021)
	lines := Compare(hostM, local)
	if len(lines) != 2 || lines[0].State != OtherVersion || lines[1].State != Lacks {
		t.Fatalf("states %+v", lines)
	}
	if lines[0].Missing != 2 || lines[1].Missing != len(hostM.Mods[1].Files) {
		t.Errorf("missing %d and %d files", lines[0].Missing, lines[1].Missing)
	}
	for _, l := range lines {
		t.Log(l)
	}
	if same := Compare(hostM, hostM); same[0].State != Same || same[1].State != Same || !has(same[0].String(), "same") {
		t.Errorf("self compare %+v", same)
	}
	if !has(lines[1].String(), "not shared") {
		t.Errorf("line %q does not mention the files not shared", lines[1])
	}
}

// TestCompareLinePrintable: a hostile host's names cannot put escape
// sequences on the joiner's terminal.
func TestCompareLinePrintable(t *testing.T) {
	m := fakeManifest(fakeFile("a.png", []byte("a")))
	m.Mods[0].Name, m.Mods[0].Version = "\x1b]0;owned\x07", "1\x1b[2J"
	line := Compare(m, nil)[0].String()
	if strings.ContainsAny(line, "\x1b\x07") {
		t.Errorf("line %q holds control characters", line)
	}
}

// TestBuildNeverPublishesWhatAJoinerRefuses: files whose names clash
// where letter case does not count, a file named as another's folder and
// a linked load folder are listed as not shared, so the manifest of any
// mod decodes.
func TestBuildNeverPublishesWhatAJoinerRefuses(t *testing.T) {
	root := filepath.Join(t.TempDir(), "clash")
	writeFiles(t, root, map[string]string{
		"About/About.xml":      "<ModMetaData><packageId>test.clash</packageId></ModMetaData>",
		"Defs/A.xml":           "<Defs><ThingDef><defName>A</defName></ThingDef></Defs>",
		"Textures/Lamp.png":    "\x89PNG upper",
		"Textures/lamp.png":    "\x89PNG lower",
		"Textures/Wall":        "\x89PNG a file",
		"Textures/wall/b.png":  "\x89PNG in a folder",
		"Textures/CON.png":     "\x89PNG device",
		"Real15/Defs/Five.xml": "<Defs><JobDef><defName>Five</defName></JobDef></Defs>",
	})
	if err := os.Symlink("Real15", filepath.Join(root, "1.5")); err != nil {
		t.Fatal(err)
	}
	m := build(t, BuildOptions{}, root)
	if _, err := Decode(mustEncode(t, m), DefaultLimits); err != nil {
		t.Fatalf("the host's own manifest is refused: %v", err)
	}
	d := m.Mod("test.clash")
	shared := map[string]bool{}
	for _, f := range d.Files {
		shared[f.Path] = true
	}
	if !shared["Textures/Lamp.png"] || shared["Textures/lamp.png"] || shared["Textures/CON.png"] || shared["Textures/Wall"] == shared["Textures/wall/b.png"] {
		t.Errorf("shared %v", shared)
	}
	for p, why := range map[string]string{"Textures/lamp.png": "letter case", "Textures/CON.png": "device", "1.5": "link"} {
		if got := notShared(m, "test.clash", p); !has(got, why) {
			t.Errorf("%s not shared for %q, want %q", p, got, why)
		}
	}
}
