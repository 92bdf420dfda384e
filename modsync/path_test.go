package modsync

import (
	"errors"
	"strings"
	"testing"
)

// TestCheckPath: paths that mean one file inside the mod on every system
// pass; every trick to leave the folder, name a device or hide a
// character fails.
func TestCheckPath(t *testing.T) {
	good := []string{
		"About/About.xml", "Defs/Things.xml", "1.5/Defs/A b.xml", "Textures/Things/Lamp_east.png",
		"Languages/Français/Keyed/Main.xml", "Textures/.hidden", "a/b/c/d.e.f", "Textures/CONSOLE.png",
		"Textures/COM10.png", "Textures/LPT.png", "Sounds/nul_noise.ogg", " lead.xml",
	}
	for _, p := range good {
		if err := CheckPath(p); err != nil {
			t.Errorf("%q refused: %v", p, err)
		}
	}
	bad := map[string]string{
		"empty":            "",
		"parent":           "../evil",
		"parent inside":    "Defs/../../evil",
		"dot":              "Defs/./a.xml",
		"absolute":         "/etc/passwd",
		"drive":            "C:/Windows/evil.xml",
		"drive relative":   "C:evil",
		"stream":           "Defs/a.xml:hidden",
		"backslash":        `Defs\..\evil`,
		"unc":              "//server/share/x",
		"double slash":     "Defs//a.xml",
		"trailing slash":   "Defs/",
		"NUL byte":         "Defs/a\x00.xml",
		"newline":          "Defs/a\n.xml",
		"escape":           "Defs/\x1b[31m.xml",
		"DEL":              "Defs/a\x7f.xml",
		"C1 control":       "Defs/a\u0085.xml",
		"CON":              "CON",
		"con.txt":          "Textures/con.txt",
		"nul in folder":    "nul/a.png",
		"Aux with spaces":  "Textures/Aux .png",
		"COM1":             "Sounds/COM1.ogg",
		"lpt9":             "lpt9.xml",
		"COM superscript":  "COM¹.xml",
		"CONIN$":           "Textures/CONIN$",
		"trailing dot":     "Defs/a.xml.",
		"trailing space":   "Defs/a.xml ",
		"dir trailing dot": "Defs./a.xml",
		"star":             "Defs/*.xml",
		"question":         "Defs/a?.xml",
		"pipe":             "Defs/a|b.xml",
		"angle":            "Defs/<a>.xml",
		"quote":            `Defs/"a".xml`,
		"not UTF-8":        "Defs/\xff.xml",
		"too long":         strings.Repeat("a/", MaxPathLen/2) + "b",
		"segment too long": strings.Repeat("a", MaxSegmentLen+1),
		"too deep":         strings.Repeat("a/", MaxPathDepth) + "b",
	}
	for name, p := range bad {
		if err := CheckPath(p); err == nil || !errors.Is(err, ErrUnsafePath) {
			t.Errorf("%s (%q): %v, want ErrUnsafePath", name, p, err)
		}
	}
}

// TestCheckModPaths: two names of one file where letter case or Unicode
// normalisation does not count, or a file that is also a folder, are
// refused together though each passes alone.
func TestCheckModPaths(t *testing.T) {
	if err := CheckModPaths([]string{"Defs/a.xml", "Defs/b.xml", "Textures/a.png", "Defs/Sub/a.xml"}); err != nil {
		t.Errorf("distinct paths refused: %v", err)
	}
	for name, paths := range map[string][]string{
		"letter case":        {"Defs/a.xml", "Defs/A.xml"},
		"folder letter case": {"Defs/a.xml", "DEFS/a.xml"},
		"sharp s":            {"Defs/straße.xml", "Defs/STRASSE.xml"},
		"Kelvin sign":        {"Defs/k.xml", "Defs/\u212a.xml"},
		"normalisation":      {"Defs/caf\u00e9.xml", "Defs/cafe\u0301.xml"},
		"same path twice":    {"Defs/a.xml", "Defs/a.xml"},
		"file then folder":   {"Defs/a", "Defs/a/b.xml"},
		"folder then file":   {"Defs/A/b.xml", "Defs/a"},
		"one bad path":       {"Defs/a.xml", "../b.xml"},
	} {
		if err := CheckModPaths(paths); !errors.Is(err, ErrUnsafePath) {
			t.Errorf("%s %q: %v, want ErrUnsafePath", name, paths, err)
		}
	}
}
