package modsync

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCodeByMagic: executables and scripts are told by their first bytes
// whatever their names; data formats are not taken for code.
func TestCodeByMagic(t *testing.T) {
	code := map[string]string{
		"Windows PE":    "MZ\x90\x00",
		"ELF":           "\x7fELF",
		"Mach-O 32":     "\xfe\xed\xfa\xce",
		"Mach-O 64":     "\xfe\xed\xfa\xcf",
		"Mach-O 32 LE":  "\xce\xfa\xed\xfe",
		"Mach-O 64 LE":  "\xcf\xfa\xed\xfe",
		"fat / Java":    "\xca\xfe\xba\xbe",
		"WebAssembly":   "\x00asm",
		"shebang":       "#!/b",
		"short shebang": "#!",
	}
	for name, head := range code {
		if codeByMagic([]byte(head)) == "" {
			t.Errorf("%s not taken for code", name)
		}
	}
	for name, head := range map[string]string{
		"PNG": "\x89PNG", "DDS": "DDS ", "Ogg": "OggS", "WAV": "RIFF", "XML": "<?xm", "BOM XML": "\xef\xbb\xbf<",
		"empty": "", "one byte M": "M", "text": "Mz a", "comment": "# no",
	} {
		if why := codeByMagic([]byte(head)); why != "" {
			t.Errorf("%s taken for code: %s", name, why)
		}
	}
}

// TestCodeByName: code is told by extension (any letter case, shared
// libraries with versions too) and by an Assemblies folder at any depth.
func TestCodeByName(t *testing.T) {
	for _, p := range []string{
		"Assemblies/Mod.dll", "1.5/Assemblies/Data.bin", "Textures/x.DLL", "Sounds/lib.so", "Sounds/libfoo.so.1",
		"Defs/run.sh", "Defs/x.bat", "Defs/x.ps1", "Languages/x.lua", "Languages/x.js", "Textures/x.py", "Patches/x.cs",
		"About/x.exe", "About/x.dylib", "Textures/ASSEMBLIES/x.png",
	} {
		if codeByName(p) == "" {
			t.Errorf("%s not taken for code", p)
		}
	}
	for _, p := range []string{"Defs/A.xml", "Textures/Lamp.png", "Sounds/a.ogg", "Textures/sources/x.png", "Textures/dll.png", "Languages/English/Keyed/So.xml"} {
		if why := codeByName(p); why != "" {
			t.Errorf("%s taken for code: %s", p, why)
		}
	}
}

// TestCacheOpenAndDefault: a cached file opens with its bytes; the
// default cache is in the user's cache folder.
func TestCacheOpenAndDefault(t *testing.T) {
	c := newCache(t)
	data := []byte("texture")
	if err := c.Insert(sumOf(data), int64(len(data)), bytesReader(data)); err != nil {
		t.Fatal(err)
	}
	f, err := c.Open(sumOf(data))
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(f)
	f.Close()
	if string(got) != "texture" {
		t.Errorf("opened %q", got)
	}
	if _, err := c.Open(sumOf([]byte("other"))); err == nil {
		t.Error("opened a file not in the cache")
	}
	home := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", home)
	t.Setenv("HOME", home)
	dir, err := DefaultCacheDir()
	base, _ := os.UserCacheDir()
	if err != nil || dir != filepath.Join(base, "lockhost", "content") || !strings.HasPrefix(dir, home) {
		t.Errorf("default cache %q, %v", dir, err)
	}
}

// TestCopyIn: where hard links cannot be made, a view's file is a copy
// of the cached one, never overwriting what is there.
func TestCopyIn(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "src"), []byte("bytes"), 0o644)
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	if err := copyIn(root, "src", "dst"); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "dst")); string(got) != "bytes" {
		t.Errorf("copied %q", got)
	}
	if err := copyIn(root, "src", "dst"); err == nil {
		t.Error("copied over an existing file")
	}
	if err := copyIn(root, "src", "../escape"); err == nil {
		t.Error("copied out of the root")
	}
}
