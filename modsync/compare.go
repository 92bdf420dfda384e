package modsync

import (
	"fmt"
	"path/filepath"

	"github.com/lockhost/lockhost/defs"
	"github.com/lockhost/lockhost/internal/termsafe"
)

// State is how a joiner's copy of a host's mod compares.
type State int

// The states of a host's mod on the joiner's side.
const (
	Same         State = iota // the joiner has the same shared files
	Lacks                     // the joiner does not have the mod
	OtherVersion              // the joiner has the mod with other files
	HeldBack                  // the host does not share it
)

// ModState is one of the host's mods as the joiner has it.
type ModState struct {
	PackageID    string
	Name         string
	State        State
	HostVersion  string // About.xml's modVersion on each side, may be empty
	LocalVersion string
	// Missing counts the files (and their bytes) of the host's copy that
	// the joiner has in none of its mods.
	Missing      int
	MissingBytes int64
	NotShared    int // files the host does not share (code, …)
	// Have says the joiner has a mod of this package ID, in whatever
	// version (for a held-back mod, its copy is what it can load).
	Have bool
}

// Compare compares a host's manifest with one the joiner built from its
// own mods (nil when it has none), mod by mod in the host's load order.
func Compare(host, local *Manifest) []ModState {
	have := map[Sum]bool{}
	if local != nil {
		for _, d := range local.Mods {
			for _, f := range d.Files {
				have[f.Hash] = true
			}
		}
	}
	out := make([]ModState, 0, len(host.Mods))
	for i := range host.Mods {
		d := &host.Mods[i]
		s := ModState{PackageID: d.PackageID, Name: d.Name, HostVersion: d.Version, NotShared: len(d.NotShared), State: Lacks}
		var mine *Mod
		if local != nil {
			mine = local.Mod(d.PackageID)
		}
		s.Have = mine != nil
		if mine != nil {
			s.LocalVersion = mine.Version
		}
		switch {
		case mine != nil && mine.Digest() == d.Digest():
			s.State = Same
		case d.Held:
			s.State = HeldBack
		case mine != nil:
			s.State = OtherVersion
		}
		if s.State != Same {
			for _, f := range d.Files {
				if !have[f.Hash] {
					s.Missing, s.MissingBytes = s.Missing+1, s.MissingBytes+f.Size
				}
			}
		}
		out = append(out, s)
	}
	return out
}

// String is the line a joiner prints for the mod. The host's names and
// versions are made safe to print (internal/termsafe).
func (s ModState) String() string {
	s.PackageID, s.Name = termsafe.String(s.PackageID), termsafe.String(s.Name)
	s.HostVersion, s.LocalVersion = termsafe.String(s.HostVersion), termsafe.String(s.LocalVersion)
	name := s.PackageID
	if s.Name != "" {
		name = fmt.Sprintf("%s (%s)", s.PackageID, s.Name)
	}
	extra := ""
	if s.NotShared > 0 {
		extra = fmt.Sprintf("; %d file(s) not shared (code, links): get the mod itself for those", s.NotShared)
	}
	switch s.State {
	case Same:
		return fmt.Sprintf("%s: same as the host's", name)
	case HeldBack:
		if s.Have {
			return fmt.Sprintf("%s %s: the host does not share it; your copy (version %q) is loaded", name, s.HostVersion, s.LocalVersion)
		}
		return fmt.Sprintf("%s %s: lacking, and the host does not share it", name, s.HostVersion)
	case OtherVersion:
		versions := "another version than the host's"
		if s.LocalVersion != s.HostVersion {
			versions = fmt.Sprintf("version %q, the host %q", s.LocalVersion, s.HostVersion)
		}
		return fmt.Sprintf("%s: you have %s: %d file(s), %d bytes to fetch%s", name, versions, s.Missing, s.MissingBytes, extra)
	}
	return fmt.Sprintf("%s %s: lacking: %d file(s), %d bytes to fetch%s", name, s.HostVersion, s.Missing, s.MissingBytes, extra)
}

// LocalFiles maps the hash of each file of a manifest made by Build to
// the file on disk, for Fetcher.Local (empty for a decoded manifest).
func (m *Manifest) LocalFiles() map[Sum]string {
	out := make(map[Sum]string, len(m.sources))
	for s, src := range m.sources {
		out[s] = filepath.Join(src.root, filepath.FromSlash(src.rel))
	}
	return out
}

// AddFiles records in a defs manifest (defs export) the shared files of
// each of its mods that m lists, as path, size and SHA-256, so that
// defs.Diff names the files that differ.
func AddFiles(dm *defs.Manifest, m *Manifest) {
	for i := range dm.Mods {
		d := m.Mod(dm.Mods[i].PackageID)
		if d == nil || len(d.Files) == 0 {
			continue
		}
		files := make([]defs.ManifestFile, len(d.Files))
		for j, f := range d.Files {
			files[j] = defs.ManifestFile{Path: f.Path, Size: f.Size, SHA256: f.Hash.String()}
		}
		dm.Mods[i].Files = files
	}
}
