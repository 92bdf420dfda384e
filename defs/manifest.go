package defs

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
)

// ManifestSchema is the manifest schema version this package writes and
// reads.
const ManifestSchema = 1

// MaxManifestSize is the largest manifest ReadManifest accepts, in bytes.
const MaxManifestSize = 64 << 20

// Hash64 is a 64-bit hash that JSON-encodes as a 16-digit lower-case hex
// string (JSON numbers lose precision above 2^53).
type Hash64 uint64

// String returns the hash as 16 hex digits.
func (h Hash64) String() string { return fmt.Sprintf("%016x", uint64(h)) }

// MarshalJSON encodes the hash as a 16-hex-digit string.
func (h Hash64) MarshalJSON() ([]byte, error) { return []byte(`"` + h.String() + `"`), nil }

// UnmarshalJSON accepts exactly 16 hex digits in a string.
func (h *Hash64) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("hash: %w", err)
	}
	if len(s) != 16 {
		return fmt.Errorf("hash %q: want 16 hex digits", s)
	}
	v, err := strconv.ParseUint(s, 16, 64)
	if err != nil {
		return fmt.Errorf("hash %q: want 16 hex digits", s)
	}
	*h = Hash64(v)
	return nil
}

// Manifest is the exportable description of a content set: enough to
// compare two sets def by def without their files.
type Manifest struct {
	Schema      int                `json:"schema" codec:"schema"`
	GameVersion string             `json:"gameVersion" codec:"gameVersion"`
	Mods        []ManifestMod      `json:"mods" codec:"mods"`
	Databases   []ManifestDatabase `json:"databases" codec:"databases"` // sorted by Type
	// ScanErrors is the number of errors the scan met (files or defs it
	// could not read); a manifest with errors describes content only in
	// part.
	ScanErrors int `json:"scanErrors,omitempty" codec:"scanErrors,omitempty"`
	// Active and ActiveComplete record what MayRequire was checked
	// against (see Set.Active).
	Active         []string `json:"active,omitempty" codec:"active,omitempty"`
	ActiveComplete bool     `json:"activeComplete,omitempty" codec:"activeComplete,omitempty"`
}

// ManifestMod is one mod of a manifest, in load order.
type ManifestMod struct {
	PackageID string `json:"packageId" codec:"packageId"`
	Name      string `json:"name" codec:"name"`
	Version   string `json:"version,omitempty" codec:"version"`
	// Files, when the manifest was exported with them, are the mod's data
	// files as content sync shares them, sorted by path; Diff compares
	// them when both sides list a mod's files. They never go on the wire.
	Files []ManifestFile `json:"files,omitempty" codec:"-"`
}

// ManifestFile is one data file of a mod: its path in the mod folder
// ('/'-separated), size and SHA-256 in lower-case hex.
type ManifestFile struct {
	Path   string `json:"path"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
}

// ManifestDatabase is one database of a manifest. Defs is either empty
// (summary only) or holds every def, sorted by Name.
type ManifestDatabase struct {
	Type  string        `json:"type" codec:"type"`
	Count int           `json:"count" codec:"count"`
	Hash  Hash64        `json:"hash" codec:"hash"`
	Defs  []ManifestDef `json:"defs,omitempty" codec:"defs"`
}

// ManifestDef is one def of a manifest database.
type ManifestDef struct {
	Name string `json:"name" codec:"name"`
	Mod  string `json:"mod" codec:"mod"` // packageId of the providing mod
	Hash Hash64 `json:"hash" codec:"hash"`
	// UnresolvedParent names the missing parent of a def whose parent was
	// not in the scan (see Def.UnresolvedParent).
	UnresolvedParent string `json:"unresolvedParent,omitempty" codec:"unresolvedParent,omitempty"`
	// File is the file the def comes from, relative to its mod.
	File string `json:"file,omitempty" codec:"file,omitempty"`
	// Undecided lists the mods whose state decides whether the game loads
	// this def or some of its list items, but which were neither scanned
	// nor declared active or inactive (see Def.Undecided).
	Undecided []string `json:"undecided,omitempty" codec:"undecided,omitempty"`
	// Elements, when present, fingerprints the def's elements (see
	// Elements) so that Diff can name the first element that differs.
	Elements string `json:"elements,omitempty" codec:"elements,omitempty"`
}

// Unresolved returns the defs of the manifest whose parent was not in the
// scan, by database type and name.
func (m *Manifest) Unresolved() []UnresolvedDef {
	var out []UnresolvedDef
	for _, db := range m.Databases {
		for _, d := range db.Defs {
			if d.UnresolvedParent != "" {
				out = append(out, UnresolvedDef{Type: db.Type, Name: d.Name, Mod: d.Mod, Parent: d.UnresolvedParent})
			}
		}
	}
	return out
}

// Undecided returns the defs of the manifest that depend on mods whose
// state was not known (see Def.Undecided), by database type and name.
func (m *Manifest) Undecided() []UndecidedDef {
	var out []UndecidedDef
	for _, db := range m.Databases {
		for _, d := range db.Defs {
			if len(d.Undecided) > 0 {
				out = append(out, UndecidedDef{Type: db.Type, Name: d.Name, Mod: d.Mod, Mods: d.Undecided})
			}
		}
	}
	return out
}

// Complete reports whether the manifest describes content read completely:
// no scan errors, no def with an unresolved parent and none that depends
// on a mod whose state was not known.
func (m *Manifest) Complete() bool {
	return m.ScanErrors == 0 && len(m.Unresolved()) == 0 && len(m.Undecided()) == 0
}

// Manifest describes the set, including every def.
func (s *Set) Manifest() *Manifest { return s.manifest(false) }

// ManifestWithElements is Manifest with each def's Elements, so that a
// diff against it names the first element that differs; it is about four
// times larger.
func (s *Set) ManifestWithElements() *Manifest { return s.manifest(true) }

func (s *Set) manifest(elements bool) *Manifest {
	m := &Manifest{Schema: ManifestSchema, GameVersion: s.GameVersion, Mods: make([]ManifestMod, len(s.Mods)), Databases: make([]ManifestDatabase, len(s.Databases)), ScanErrors: len(s.Errors),
		Active: s.Active, ActiveComplete: s.ActiveComplete}
	for i, mod := range s.Mods {
		m.Mods[i] = ManifestMod{PackageID: mod.PackageID, Name: mod.Name, Version: mod.Version}
	}
	for i, db := range s.Databases {
		md := ManifestDatabase{Type: db.Type, Count: len(db.Defs), Hash: Hash64(db.Hash), Defs: make([]ManifestDef, len(db.Defs))}
		for j, d := range db.Defs {
			md.Defs[j] = ManifestDef{Name: d.Name, Mod: d.Mod, Hash: Hash64(d.Hash), UnresolvedParent: d.UnresolvedParent, File: d.File, Undecided: d.Undecided}
			if elements {
				md.Defs[j].Elements = Elements(d.Node)
			}
		}
		m.Databases[i] = md
	}
	return m
}

// Summary returns the manifest's databases as summaries, sorted by Type.
func (m *Manifest) Summary() []Summary {
	out := make([]Summary, len(m.Databases))
	for i, db := range m.Databases {
		out[i] = Summary{Type: db.Type, Count: clampCount(db.Count), Hash: uint64(db.Hash)}
	}
	return out
}

// Database returns the manifest database of the given type, or nil.
func (m *Manifest) Database(typ string) *ManifestDatabase {
	i, ok := slices.BinarySearchFunc(m.Databases, typ, func(d ManifestDatabase, t string) int { return strings.Compare(d.Type, t) })
	if !ok {
		return nil
	}
	return &m.Databases[i]
}

// Only returns a copy of the manifest holding only the databases whose
// types are listed (unknown types are ignored); game version and mods are
// kept. The host uses it to send a rejected client the detail of the
// databases that differ; the client then restricts its own manifest to the
// same types and calls Diff(host, client) to print which defs differ.
func (m *Manifest) Only(types []string) *Manifest {
	out := &Manifest{Schema: m.Schema, GameVersion: m.GameVersion, Mods: slices.Clone(m.Mods), ScanErrors: m.ScanErrors,
		Active: slices.Clone(m.Active), ActiveComplete: m.ActiveComplete}
	for _, db := range m.Databases {
		if slices.Contains(types, db.Type) {
			db.Defs = slices.Clone(db.Defs)
			out.Databases = append(out.Databases, db)
		}
	}
	return out
}

// WriteManifest writes m as indented JSON.
func WriteManifest(w io.Writer, m *Manifest) error {
	if err := m.Validate(); err != nil {
		return fmt.Errorf("writing manifest: %w", err)
	}
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return fmt.Errorf("writing manifest: %w", err)
	}
	b = append(b, '\n')
	if _, err := w.Write(b); err != nil {
		return fmt.Errorf("writing manifest: %w", err)
	}
	return nil
}

// ReadManifest reads a JSON manifest, rejecting input larger than
// MaxManifestSize, trailing data, an unknown schema and content that fails
// Validate.
func ReadManifest(r io.Reader) (*Manifest, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxManifestSize+1))
	if err != nil {
		return nil, fmt.Errorf("reading manifest: %w", err)
	}
	if len(data) > MaxManifestSize {
		return nil, fmt.Errorf("reading manifest: larger than %d bytes", MaxManifestSize)
	}
	var probe struct {
		Schema *int `json:"schema"`
	}
	if err := json.Unmarshal(data, &probe); err != nil {
		return nil, fmt.Errorf("reading manifest: %w", err)
	}
	if probe.Schema == nil {
		return nil, errors.New("reading manifest: no schema field")
	}
	if *probe.Schema != ManifestSchema {
		return nil, fmt.Errorf("reading manifest: schema %d is not supported (want %d)", *probe.Schema, ManifestSchema)
	}
	var m Manifest
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("reading manifest: %w", err)
	}
	if err := m.Validate(); err != nil {
		return nil, fmt.Errorf("reading manifest: %w", err)
	}
	return &m, nil
}

// Validate checks a manifest's invariants: known schema; mods with
// non-empty, unique (case-insensitive) package IDs; databases with
// non-empty types, sorted and unique; counts not negative; and, where a
// database lists its defs, exactly Count defs with non-empty names sorted
// and unique, whose hashes reproduce the database hash.
func (m *Manifest) Validate() error {
	if m == nil {
		return errors.New("nil manifest")
	}
	if m.Schema != ManifestSchema {
		return fmt.Errorf("schema %d is not supported (want %d)", m.Schema, ManifestSchema)
	}
	if m.ScanErrors < 0 {
		return fmt.Errorf("bad scan error count %d", m.ScanErrors)
	}
	ids := make(map[string]bool, len(m.Mods))
	for i, mod := range m.Mods {
		if mod.PackageID == "" {
			return fmt.Errorf("mod %d has no packageId", i+1)
		}
		id := strings.ToLower(mod.PackageID)
		if ids[id] {
			return fmt.Errorf("mod %s listed twice", mod.PackageID)
		}
		ids[id] = true
		if err := validateFiles(mod.Files); err != nil {
			return fmt.Errorf("mod %s: %w", mod.PackageID, err)
		}
	}
	for i, db := range m.Databases {
		if db.Type == "" {
			return fmt.Errorf("database %d has no type", i+1)
		}
		if i > 0 && m.Databases[i-1].Type >= db.Type {
			return fmt.Errorf("database %s: databases not sorted by type or listed twice", db.Type)
		}
		if db.Count < 0 || db.Count > 1<<31-1 {
			return fmt.Errorf("database %s: bad count %d", db.Type, db.Count)
		}
		if len(db.Defs) == 0 {
			continue
		}
		if len(db.Defs) != db.Count {
			return fmt.Errorf("database %s: count %d but %d defs listed", db.Type, db.Count, len(db.Defs))
		}
		names := make([]string, len(db.Defs))
		hashes := make([]uint64, len(db.Defs))
		for j, d := range db.Defs {
			if d.Name == "" {
				return fmt.Errorf("database %s: def %d has no name", db.Type, j+1)
			}
			if j > 0 && db.Defs[j-1].Name >= d.Name {
				return fmt.Errorf("database %s: def %s: defs not sorted by name or listed twice", db.Type, d.Name)
			}
			names[j], hashes[j] = d.Name, uint64(d.Hash)
		}
		if h := DatabaseHash(db.Type, names, hashes); h != uint64(db.Hash) {
			return fmt.Errorf("database %s: hash %s does not match its defs (%s)", db.Type, db.Hash, Hash64(h))
		}
	}
	return nil
}

// validateFiles checks a mod's files: paths non-empty, sorted and
// unique, sizes not negative, hashes 64 lower-case hex digits.
func validateFiles(files []ManifestFile) error {
	for i, f := range files {
		if f.Path == "" || (i > 0 && files[i-1].Path >= f.Path) {
			return fmt.Errorf("file %d: path %q empty, or files not sorted by path or listed twice", i+1, f.Path)
		}
		if f.Size < 0 {
			return fmt.Errorf("file %s: negative size", f.Path)
		}
		if len(f.SHA256) != 64 || strings.Trim(f.SHA256, "0123456789abcdef") != "" {
			return fmt.Errorf("file %s: sha256 %q is not 64 lower-case hex digits", f.Path, f.SHA256)
		}
	}
	return nil
}
