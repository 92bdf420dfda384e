package modsync

import (
	"bytes"
	"path"
	"strings"
)

// codeExts are the extensions of files that are code (or carry it): never
// shared, whatever their bytes.
var codeExts = map[string]bool{
	".dll": true, ".exe": true, ".so": true, ".dylib": true, ".cs": true, ".csx": true,
	".py": true, ".pyc": true, ".lua": true, ".js": true, ".mjs": true, ".sh": true,
	".bat": true, ".cmd": true, ".ps1": true, ".psm1": true, ".vbs": true, ".com": true,
	".scr": true, ".msi": true, ".jar": true, ".class": true, ".wasm": true, ".rb": true,
	".pl": true, ".php": true, ".pdb": true, ".mdb": true, ".app": true, ".command": true,
}

// codeFolders are folder names whose files are code, at any depth.
var codeFolders = map[string]bool{"assemblies": true}

// codeByName returns why the file at p is code by its name alone, or "".
func codeByName(p string) string {
	segs := strings.Split(p, "/")
	for _, s := range segs[:len(segs)-1] {
		if codeFolders[strings.ToLower(s)] {
			return "code: in a " + s + " folder"
		}
	}
	name := strings.ToLower(segs[len(segs)-1])
	if ext := path.Ext(name); codeExts[ext] {
		return "code: " + ext + " file"
	}
	// libfoo.so.1 and the like.
	if strings.Contains(name, ".so.") || strings.Contains(name, ".dll.") {
		return "code: shared library"
	}
	return ""
}

// magicLen is how many leading bytes codeByMagic looks at.
const magicLen = 4

// codeByMagic returns why a file starting with head is an executable or
// script, or "": Windows (MZ), ELF, Mach-O (thin or fat, also Java class
// files), WebAssembly and "#!" scripts.
func codeByMagic(head []byte) string {
	switch {
	case bytes.HasPrefix(head, []byte("MZ")):
		return "code: Windows executable header"
	case bytes.HasPrefix(head, []byte("\x7fELF")):
		return "code: ELF executable header"
	case bytes.HasPrefix(head, []byte{0xfe, 0xed, 0xfa, 0xce}), bytes.HasPrefix(head, []byte{0xfe, 0xed, 0xfa, 0xcf}),
		bytes.HasPrefix(head, []byte{0xce, 0xfa, 0xed, 0xfe}), bytes.HasPrefix(head, []byte{0xcf, 0xfa, 0xed, 0xfe}),
		bytes.HasPrefix(head, []byte{0xca, 0xfe, 0xba, 0xbe}):
		return "code: Mach-O executable header"
	case bytes.HasPrefix(head, []byte("\x00asm")):
		return "code: WebAssembly module"
	case bytes.HasPrefix(head, []byte("#!")):
		return "code: script"
	}
	return ""
}

// contentFolders are the folders of a load folder the game reads data
// from, by lower-case name, and the kind of their files.
var contentFolders = map[string]Kind{
	"defs":         KindDefs,
	"patches":      KindPatches,
	"languages":    KindLanguages,
	"textures":     KindTexture,
	"sounds":       KindSound,
	"assetbundles": KindData,
	"assemblies":   "", // read by the game, never shared
}

// selector decides which files of a mod a manifest lists: About/**, the
// root's LoadFolders.xml, and for each load folder F the files under
// F/Defs, F/Patches, F/Languages, F/Textures, F/Sounds, F/AssetBundles
// and F/Assemblies (the last never shared).
type selector struct{ folders []string }

// under returns p relative to folder f, if p is inside it.
func under(p, f string) (string, bool) {
	if f == "." {
		return p, true
	}
	return strings.CutPrefix(p, f+"/")
}

// file returns the kind of the file at p and whether the game reads it.
// Code in a read folder has the empty kind.
func (s selector) file(p string) (Kind, bool) {
	if strings.HasPrefix(p, "About/") {
		return KindAbout, true
	}
	if !strings.Contains(p, "/") && strings.EqualFold(p, "LoadFolders.xml") {
		return KindData, true
	}
	for _, f := range s.folders {
		rest, ok := under(p, f)
		if !ok {
			continue
		}
		top, _, nested := strings.Cut(rest, "/")
		if k, ok := contentFolders[strings.ToLower(top)]; ok && nested {
			return k, true
		}
	}
	return "", false
}

// dir reports whether the folder at p (not ".") may hold a file the game
// reads, so that a walk need not enter the others.
func (s selector) dir(p string) bool {
	if p == "About" || strings.HasPrefix(p, "About/") {
		return true
	}
	for _, f := range s.folders {
		if f != "." && (f == p || strings.HasPrefix(f, p+"/")) {
			return true
		}
		if rest, ok := under(p, f); ok {
			top, _, _ := strings.Cut(rest, "/")
			if _, ok := contentFolders[strings.ToLower(top)]; ok {
				return true
			}
		}
	}
	return false
}
