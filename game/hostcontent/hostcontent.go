package hostcontent

import (
	"log/slog"

	"github.com/lockhost/lockhost/defs"
	"github.com/lockhost/lockhost/game/colony"
	gamecontent "github.com/lockhost/lockhost/game/content"
	"github.com/lockhost/lockhost/host"
	"github.com/lockhost/lockhost/lockstep"
	"github.com/lockhost/lockhost/saves"
)

// MaxSaveRaw bounds, in bytes, each decompressed blob of a save that
// LoadSave loads: the world data and each map (2 GiB).
const MaxSaveRaw = 1 << 31

// Content is what a host tells joiners about b: game version, mods, def
// database summaries, and the per-def detail a refused joiner gets to
// print an exact diff. A detail that cannot be encoded is logged to log
// and left out.
func Content(b *gamecontent.Bundle, log *slog.Logger) host.Content {
	return host.Content{GameVersion: b.GameVersion, Mods: b.Mods, Databases: b.Summary(), Detail: detail(b.Set.Manifest(), log)}
}

// ManifestContent is what a host tells joiners about the content m
// describes (a manifest "defs export" wrote), as Content does for the
// content itself: the same game version, mods, databases and detail,
// without the content's folders.
func ManifestContent(m *defs.Manifest, log *slog.Logger) host.Content {
	mods := make([]string, len(m.Mods))
	for i, mod := range m.Mods {
		mods[i] = mod.PackageID
	}
	return host.Content{GameVersion: m.GameVersion, Mods: mods, Databases: m.Summary(), Detail: detail(m, log)}
}

// detail is the Defs refusal's detail of manifest: the manifest of the
// differing databases' types.
func detail(manifest *defs.Manifest, log *slog.Logger) func(types []string) []byte {
	return func(types []string) []byte {
		d, err := defs.MarshalDetail(manifest.Only(types))
		if err != nil {
			log.Error("def detail", "err", err)
			return nil
		}
		return d
	}
}

// SaveMeta is the static description of saves made with b in the game
// named gameName.
func SaveMeta(b *gamecontent.Bundle, gameName string) saves.Meta {
	return ContentMeta(host.Content{GameVersion: b.GameVersion, Mods: b.Mods, Databases: b.Summary()}, gameName)
}

// ContentMeta is the static description of saves made by a host that
// announces c, in the game named gameName.
func ContentMeta(c host.Content, gameName string) saves.Meta {
	m := saves.Meta{GameName: gameName, GameVersion: c.GameVersion, Mods: c.Mods}
	for _, d := range c.Databases {
		m.Databases = append(m.Databases, saves.DefSummary{Type: d.Type, Count: d.Count, Hash: d.Hash})
	}
	return m
}

// LoadSave rebuilds the world saved in f with b's content, map by map,
// each blob bounded by MaxSaveRaw. It does not check that f was made with
// the same def databases.
func LoadSave(b *gamecontent.Bundle, f *saves.File) (lockstep.Sim, error) {
	return saves.Load(f, nil, colony.MapLoader(b.Content), MaxSaveRaw)
}
