package modsync

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"

	"github.com/lockhost/lockhost/internal/codec"
)

// FormatVersion is the manifest format this package writes and reads.
const FormatVersion = 1

// Sum is a SHA-256 digest: of a file's bytes, or of a manifest's encoding.
type Sum [32]byte

// String is the digest in lower-case hex, as in a /content/ URL.
func (s Sum) String() string { return hex.EncodeToString(s[:]) }

// ParseSum reads a digest written by Sum.String (64 lower-case hex digits).
func ParseSum(s string) (Sum, error) {
	var out Sum
	if len(s) != 64 || strings.ToLower(s) != s {
		return out, fmt.Errorf("sha256 %q: not 64 lower-case hex digits", s)
	}
	if _, err := hex.Decode(out[:], []byte(s)); err != nil {
		return out, fmt.Errorf("sha256 %q: %w", s, err)
	}
	return out, nil
}

// Kind says what a shared file is to the game.
type Kind string

// The kinds of shared files, by the folder they are in.
const (
	KindDefs      Kind = "defs"      // <load folder>/Defs/**
	KindPatches   Kind = "patches"   // <load folder>/Patches/**
	KindLanguages Kind = "languages" // <load folder>/Languages/**
	KindAbout     Kind = "about"     // About/** at the mod root
	KindTexture   Kind = "texture"   // <load folder>/Textures/**
	KindSound     Kind = "sound"     // <load folder>/Sounds/**
	KindData      Kind = "data"      // LoadFolders.xml, <load folder>/AssetBundles/**
)

var kinds = []Kind{KindDefs, KindPatches, KindLanguages, KindAbout, KindTexture, KindSound, KindData}

// Manifest lists the content a host shares: its mods in load order, and
// for each the files a joiner needs to load it as the host does.
type Manifest struct {
	Format      int    `codec:"v"`
	GameVersion string `codec:"g"`
	Mods        []Mod  `codec:"m"`

	// sources is where Build found each shared file (nil when decoded).
	sources map[Sum]source
}

// Mod is one mod of a manifest.
type Mod struct {
	PackageID string `codec:"id"`
	Name      string `codec:"n"`
	Version   string `codec:"ver"`
	// Folders are the load folders the host read, in increasing
	// priority ("." is the mod root); a view of the mod has each of them,
	// so that it selects the same folders as the host's copy.
	Folders []string `codec:"lf"`
	// Held is set when the host holds the mod back (it lists no files):
	// the player must get it by other means.
	Held bool `codec:"held"`
	// Files are the shared files, sorted by path (byte order).
	Files []File `codec:"f"`
	// NotShared are the files the game may read that are not shared
	// (code, links, unsafe names), sorted by path, for the player to get
	// by other means.
	NotShared []NotShared `codec:"x"`

	// dir is the mod's folder when Build made the manifest ("" when
	// decoded).
	dir string
}

// File is one shared file.
type File struct {
	Path string `codec:"p"` // relative to the mod folder, '/'-separated
	Size int64  `codec:"s"`
	Hash Sum    `codec:"h"` // SHA-256 of the file's bytes
	Kind Kind   `codec:"k"`
	// Databases are the def types whose loaded defs come from this file,
	// sorted (def files only).
	Databases []string `codec:"d"`
}

// NotShared is a file of a mod that the host does not share.
type NotShared struct {
	Path   string `codec:"p"`
	Size   int64  `codec:"s"`
	Reason string `codec:"r"`
}

// Encode returns the manifest's msgpack encoding (section 17 of the
// protocol): the same manifest always encodes to the same bytes.
func (m *Manifest) Encode() ([]byte, error) {
	b, err := codec.Encode(m)
	if err != nil {
		return nil, fmt.Errorf("encoding content manifest: %w", err)
	}
	return b, nil
}

// Hash is the SHA-256 of the manifest's encoding.
func (m *Manifest) Hash() (Sum, error) {
	b, err := m.Encode()
	if err != nil {
		return Sum{}, err
	}
	return sha256.Sum256(b), nil
}

// Mod returns the mod with the package ID (compared case insensitively),
// or nil.
func (m *Manifest) Mod(packageID string) *Mod {
	for i := range m.Mods {
		if strings.EqualFold(m.Mods[i].PackageID, packageID) {
			return &m.Mods[i]
		}
	}
	return nil
}

// Digest identifies a mod's shared content: the SHA-256 over its package
// ID in lower case, its load folders and each file's path and hash. Two
// mods with one digest load the same shared files.
func (d *Mod) Digest() Sum {
	h := sha256.New()
	put := func(s string) {
		var n [4]byte
		n[0], n[1], n[2], n[3] = byte(len(s)>>24), byte(len(s)>>16), byte(len(s)>>8), byte(len(s))
		h.Write(n[:])
		h.Write([]byte(s))
	}
	put(strings.ToLower(d.PackageID))
	for _, f := range d.Folders {
		put(f)
	}
	put("")
	for _, f := range d.Files {
		put(f.Path)
		h.Write(f.Hash[:])
	}
	var out Sum
	h.Sum(out[:0])
	return out
}

// Size is the total size of the mod's shared files.
func (d *Mod) Size() int64 {
	var n int64
	for _, f := range d.Files {
		n += f.Size
	}
	return n
}

// sortMod puts a mod's lists in their canonical order.
func sortMod(d *Mod) {
	slices.SortFunc(d.Files, func(a, b File) int { return strings.Compare(a.Path, b.Path) })
	slices.SortFunc(d.NotShared, func(a, b NotShared) int { return strings.Compare(a.Path, b.Path) })
}
