package gamecontent

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/lockhost/lockhost/defs"
	"github.com/lockhost/lockhost/game/colony"
)

// DefaultGameVersion is the game version announced and used to pick
// version folders when --game-version is not given: the same default as
// the defs tools, so that serve, join and "defs scan" read the same
// folders.
const DefaultGameVersion = defs.DefaultGameVersion

// Bundle is loaded content: the def set, what the simulation needs from it,
// and what the handshake sends.
type Bundle struct {
	Set         *defs.Set
	Content     *colony.Content
	GameVersion string
	// Mods are the mods' package IDs in load order.
	Mods []string
	// Embedded is true for the built-in default content.
	Embedded bool
	// Report says which defs the reference simulation simulates and which
	// it carries untouched (nil for the embedded content).
	Report *colony.Report
}

// Summary is the per-database count and hash the handshake compares.
func (b *Bundle) Summary() []defs.Summary { return b.Set.Summary() }

// Load scans dirs (mod folders in load order), or the embedded default
// content when dirs is empty. Def errors make the content unusable: a host
// must not run on content it only half read.
func Load(dirs []string, gameVersion string) (*Bundle, error) {
	gameVersion = defs.GameVersionOrDefault(gameVersion)
	if err := defs.CheckGameVersion(gameVersion); err != nil {
		return nil, err
	}
	if len(dirs) == 0 {
		return loadEmbedded(gameVersion)
	}
	// The game run here loads exactly this content: a MayRequire naming
	// any other mod (a DLC not given, …) is not met, as in a game without
	// that mod.
	set, err := defs.ScanDirs(dirs, defs.Options{GameVersion: gameVersion, ActiveComplete: true})
	if err != nil {
		return nil, fmt.Errorf("scan content: %w", err)
	}
	return finish(set, gameVersion, strings.Join(dirs, " --content "))
}

// LoadFS is Load for mods given as file systems (in load order), as the
// browser player has them: the embedded content and mods fetched from
// the host. They are scanned as Load scans folders, so the same files
// make the same def databases.
func LoadFS(mods []defs.ModSource, gameVersion string) (*Bundle, error) {
	gameVersion = defs.GameVersionOrDefault(gameVersion)
	if err := defs.CheckGameVersion(gameVersion); err != nil {
		return nil, err
	}
	if len(mods) == 0 {
		return loadEmbedded(gameVersion)
	}
	set, err := defs.ScanFS(mods, defs.Options{GameVersion: gameVersion, ActiveComplete: true})
	if err != nil {
		return nil, fmt.Errorf("scan content: %w", err)
	}
	names := make([]string, len(mods))
	for i, m := range mods {
		names[i] = m.Dir
	}
	return finish(set, gameVersion, strings.Join(names, " --content "))
}

// loadEmbedded is the built-in default content.
func loadEmbedded(gameVersion string) (*Bundle, error) {
	b := &Bundle{GameVersion: gameVersion, Embedded: true}
	var err error
	b.Content, b.Set, err = colony.DefaultContent()
	if err != nil {
		return nil, fmt.Errorf("embedded content: %w", err)
	}
	// The embedded content has no version folders; record the version it
	// is run as, so manifests compare like for like.
	b.Set.GameVersion = gameVersion
	return b.done()
}

// finish turns a scanned set into a Bundle; contentArgs are the mods as
// --content arguments, for the hint when the base content is missing.
func finish(set *defs.Set, gameVersion, contentArgs string) (*Bundle, error) {
	b := &Bundle{GameVersion: gameVersion, Set: set}
	if len(set.Errors) > 0 {
		msgs := make([]string, 0, len(set.Errors))
		for _, e := range set.Errors {
			msgs = append(msgs, e.String())
		}
		return nil, fmt.Errorf("content has %d def errors:\n  %s", len(msgs), strings.Join(msgs, "\n  "))
	}
	var err error
	b.Content, b.Report, err = colony.ReadContent(set)
	var lacks *colony.LacksError
	if errors.As(err, &lacks) {
		return nil, fmt.Errorf("the content has no %s, which every world needs: a mod builds on the base content, "+
			"which must be loaded under it, first in load order (--content PATH/TO/RimWorld/Data/Core --content %s for the game's Core, "+
			"or --content game/colony/content/Core --content %s for this repository's default content, the embedded one)",
			strings.Join(lacks.Lacks, ", no "), contentArgs, contentArgs)
	}
	if err != nil {
		return nil, fmt.Errorf("content: %w", err)
	}
	return b.done()
}

// done records the mods' package IDs and checks there are databases.
func (b *Bundle) done() (*Bundle, error) {
	for _, m := range b.Set.Mods {
		b.Mods = append(b.Mods, m.PackageID)
	}
	if len(b.Set.Databases) == 0 {
		return nil, errors.New("content has no def databases")
	}
	return b, nil
}

// Notes are sentences about how the content was read that a user should
// see (defs whose parent is not in the content), for a warning log line.
func (b *Bundle) Notes() []string {
	var out []string
	if n := len(b.Set.Unresolved); n > 0 {
		d := b.Set.Unresolved[0]
		out = append(out, fmt.Sprintf("%d def(s) have a parent that is not in the content, e.g. %s %s (mod %s) with parent %q; they are hashed by their own XML", n, d.Type, d.Name, d.Mod, d.UnresolvedParent))
	}
	if n := len(b.Set.Skipped); n > 0 || b.Set.SkippedItems > 0 {
		out = append(out, fmt.Sprintf("%d def(s) and %d list item(s) are not loaded because a mod their MayRequire names is not in the content, as the game does without that mod", n, b.Set.SkippedItems))
	}
	if b.Report != nil {
		var carried []string
		total := 0
		for typ, n := range b.Report.Carried {
			carried = append(carried, typ)
			total += n
		}
		if total > 0 {
			slices.Sort(carried)
			if len(carried) > maxTypesNamed {
				carried = append(carried[:maxTypesNamed], fmt.Sprintf("and %d more types", len(carried)-maxTypesNamed))
			}
			out = append(out, fmt.Sprintf("%d def(s) are carried without being simulated (still part of the def databases every joiner must match), of types %s", total, strings.Join(carried, ", ")))
		}
		if n := len(b.Report.Notes); n > 0 {
			out = append(out, fmt.Sprintf("%d value(s) are not simulated as written, e.g. %s", n, b.Report.Notes[0]))
		}
	}
	for _, m := range b.Set.Mods {
		if m.DerivedID {
			out = append(out, fmt.Sprintf("mod in %s has no packageId; it is called %s, from its folder name", m.Dir, m.PackageID))
		}
	}
	return out
}

// Folders describes, for a log line, the folders read from each mod:
// "id: /, 1.6/; id2: /" (empty for the embedded content).
func (b *Bundle) Folders() string {
	if b.Embedded {
		return ""
	}
	parts := make([]string, 0, len(b.Set.Mods))
	for _, m := range b.Set.Mods {
		fs := make([]string, len(m.Folders))
		for i, f := range m.Folders {
			fs[i] = strings.TrimSuffix(f, ".") + "/"
		}
		parts = append(parts, m.PackageID+": "+strings.Join(fs, ", "))
	}
	return strings.Join(parts, "; ")
}

// maxTypesNamed bounds the def types Notes names in one sentence.
const maxTypesNamed = 12
