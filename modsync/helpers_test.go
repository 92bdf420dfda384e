package modsync

import (
	"bytes"
	"context"
	"crypto/sha256"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lockhost/lockhost/defs"
)

// realMods holds real public mod content (see its README.md).
const realMods = "../../shared/testdata/real-mods"

// allowTool is the 2025 copy of a real mod, allowTool2021 the 2021 one.
var (
	allowTool     = filepath.Join(realMods, "AllowTool@cc168e8")
	allowTool2021 = filepath.Join(realMods, "AllowTool@efb0de6")
)

// gameVersion is the version the tests read mods for.
const gameVersion = "1.5"

func writeFiles(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for name, text := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// pixels is texture-like data: not text, not all the same.
func pixels(n int, seed byte) string {
	b := make([]byte, n)
	x := uint32(seed) + 1
	for i := range b {
		x = x*1664525 + 1013904223
		b[i] = byte(x >> 24)
	}
	return "\x89PNG\r\n\x1a\n" + string(b)
}

// synthMod writes a mod with data of every kind, code that must not be
// shared (by extension, in Assemblies, by an ELF header behind a .png
// name), a link, and a version folder the game does not read at 1.5.
func synthMod(t *testing.T, dir, id string) string {
	t.Helper()
	root := filepath.Join(dir, id)
	writeFiles(t, root, map[string]string{
		"About/About.xml":                   "<ModMetaData><packageId>" + id + "</packageId><name>Synth " + id + "</name><modVersion>1.0</modVersion></ModMetaData>",
		"About/Preview.png":                 pixels(3000, 1),
		"Defs/Things.xml":                   "<Defs><ThingDef><defName>Lamp_" + id + "</defName><label>lamp</label></ThingDef><RecipeDef><defName>Make_" + id + "</defName></RecipeDef></Defs>",
		"1.5/Defs/Five.xml":                 "<Defs><JobDef><defName>Five_" + id + "</defName></JobDef></Defs>",
		"1.6/Defs/Six.xml":                  "<Defs><JobDef><defName>Six_" + id + "</defName></JobDef></Defs>",
		"Patches/Lamp.xml":                  "<Patch><Operation Class=\"PatchOperationAdd\"><xpath>Defs</xpath><value/></Operation></Patch>",
		"Languages/English/Keyed/Synth.xml": "<LanguageData><SynthLamp>Lamp</SynthLamp></LanguageData>",
		"Textures/Things/Lamp.png":          pixels(20000, 2),
		"Sounds/Hum.ogg":                    "OggS" + pixels(8000, 3),
		"Assemblies/Synth.dll":              "MZ\x90\x00 a .NET assembly",
		"Textures/Things/Sneaky.png":        "\x7fELF\x02\x01\x01 an executable called a texture",
		"Textures/Things/helper.py":         "print('hi')",
		"Source/Main.cs":                    "class Main {}",
		"Readme.txt":                        "not read by the game",
	})
	if err := os.Symlink("Lamp.png", filepath.Join(root, "Textures/Things/Link.png")); err != nil {
		t.Fatal(err)
	}
	return root
}

// scanDirs scans mod folders as the host does.
func scanDirs(t *testing.T, dirs ...string) *defs.Set {
	t.Helper()
	set, err := defs.ScanDirs(dirs, defs.Options{GameVersion: gameVersion, ActiveComplete: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(set.Errors) > 0 {
		t.Fatalf("def errors: %v", set.Errors)
	}
	return set
}

// build builds the manifest of mod folders.
func build(t *testing.T, opts BuildOptions, dirs ...string) *Manifest {
	t.Helper()
	m, err := Build(scanDirs(t, dirs...), opts)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// host serves a built manifest's files over loopback HTTP.
type host struct {
	*Handler
	srv *httptest.Server
}

func serve(t *testing.T, m *Manifest) *host {
	t.Helper()
	h, err := NewHandler(m)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return &host{Handler: h, srv: srv}
}

// newCache opens an empty cache in a temporary folder.
func newCache(t *testing.T) *Cache {
	t.Helper()
	c, err := OpenCache(filepath.Join(t.TempDir(), "cache"))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// fetchAll fetches every file of m from base into c.
func fetchAll(t *testing.T, c *Cache, base string, m *Manifest) Stats {
	t.Helper()
	f := &Fetcher{Base: base, Cache: c, Limits: DefaultLimits}
	st, err := f.Fetch(context.Background(), Need(m, nil))
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// treeHash hashes every path, mode and content under root, links not
// followed: a folder nothing wrote into hashes the same.
func treeHash(t *testing.T, root string) [32]byte {
	t.Helper()
	var buf bytes.Buffer
	err := filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := e.Info()
		if err != nil {
			return err
		}
		buf.WriteString(p + "\x00" + info.Mode().String() + "\x00")
		if info.Mode().IsRegular() {
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			buf.Write(data)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return sha256.Sum256(buf.Bytes())
}

// modFile returns the file at path p of mod id in m, or nil.
func modFile(m *Manifest, id, p string) *File {
	d := m.Mod(id)
	if d == nil {
		return nil
	}
	for i := range d.Files {
		if d.Files[i].Path == p {
			return &d.Files[i]
		}
	}
	return nil
}

// notShared returns the reason mod id's file p is not shared, or "".
func notShared(m *Manifest, id, p string) string {
	for _, x := range m.Mod(id).NotShared {
		if x.Path == p {
			return x.Reason
		}
	}
	return ""
}

func has(s, sub string) bool { return strings.Contains(s, sub) }

func sumOf(b []byte) Sum { return sha256.Sum256(b) }

// get returns the status of a GET of url.
func get(t *testing.T, url string) int {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

func bytesReader(b []byte) *bytes.Reader { return bytes.NewReader(b) }
