package corpus

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/lockhost/lockhost/game/colony"
	gamecontent "github.com/lockhost/lockhost/game/content"
	"github.com/lockhost/lockhost/join"
	"github.com/lockhost/lockhost/modsync"
)

// The recorded host runs content read from folders, so that it can share
// it (docs/protocol.md, section 17.4): the embedded default content,
// copied to a folder, and recordMod, a small mod of the recorder's own
// (kept small, and the same wherever the recorder runs, so the seeds do
// not depend on what lies beside the repository). Its def is of a type
// the simulation carries untouched: the def databases differ from the
// default content's, the world does not (its blobs stay loadable with the
// default content, as the colony fuzz targets load them). A joiner with only the
// default content lacks the mod and fetches it over the session
// connection.

// recordModID is the package ID of the recorder's own mod.
const recordModID = "lockhost.recorded"

// recordMod is the recorder's own mod: its files by slash path.
var recordMod = map[string]string{
	"About/About.xml": `<?xml version="1.0" encoding="utf-8"?>
<ModMetaData>
  <packageId>` + recordModID + `</packageId>
  <name>lockhost recorded</name>
  <author>lockhost</author>
  <description>A mod the recorded session's host runs and shares.</description>
</ModMetaData>
`,
	"Defs/SoundDefs/Chimes.xml": `<?xml version="1.0" encoding="utf-8"?>
<Defs>
  <SoundDef>
    <defName>Recorded_Chime</defName>
    <label>chime</label>
  </SoundDef>
</Defs>
`,
}

// hostContent is what the recorded host runs and shares.
type hostContent struct {
	core   string              // the default content's folder
	mod    string              // recordMod's folder
	bundle *gamecontent.Bundle // both loaded, Core first
	share  *modsync.Handler    // both shared
}

// writeContent writes the default content and recordMod under dir, loads
// them and builds the share of them, as host serve --content …
// --share-content does.
func writeContent(dir string) (*hostContent, error) {
	hc := &hostContent{core: filepath.Join(dir, "Core"), mod: filepath.Join(dir, "Recorded")}
	if err := os.CopyFS(hc.core, colony.DefaultContentFS()); err != nil {
		return nil, fmt.Errorf("record: write the default content: %w", err)
	}
	for p, text := range recordMod {
		full := filepath.Join(hc.mod, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return nil, fmt.Errorf("record: write the recorded mod: %w", err)
		}
		if err := os.WriteFile(full, []byte(text), 0o644); err != nil {
			return nil, fmt.Errorf("record: write the recorded mod: %w", err)
		}
	}
	var err error
	if hc.bundle, err = gamecontent.Load([]string{hc.core, hc.mod}, ""); err != nil {
		return nil, fmt.Errorf("record: %w", err)
	}
	if !slices.Contains(hc.bundle.Mods, recordModID) {
		return nil, fmt.Errorf("record: the host's content has no %s (it has %v)", recordModID, hc.bundle.Mods)
	}
	m, err := modsync.Build(hc.bundle.Set, modsync.BuildOptions{})
	if err != nil {
		return nil, fmt.Errorf("record: share content: %w", err)
	}
	if hc.share, err = modsync.NewHandler(m); err != nil {
		return nil, fmt.Errorf("record: share content: %w", err)
	}
	return hc, nil
}

// fetchContent connects as a joiner with only the default content, which
// lacks recordMod: it gets the host's manifest and the mod's files over
// the session connection into a cache under dir, as join --fetch-content
// does, then checks that the content it can now load has the host's def
// databases, and leaves without joining.
func (s *session) fetchContent(dir string) error {
	mine, err := gamecontent.Load([]string{s.content.core}, "")
	if err != nil {
		return fmt.Errorf("record: %w", err)
	}
	local, err := modsync.Build(mine.Set, modsync.BuildOptions{})
	if err != nil {
		return fmt.Errorf("record: %w", err)
	}
	cache, err := modsync.OpenCache(filepath.Join(dir, "cache"))
	if err != nil {
		return fmt.Errorf("record: %w", err)
	}
	var dirs []string
	var st modsync.Stats
	cfg := join.Config{Addr: s.addr, Name: "Carol", Databases: mine.Summary(), Logger: s.log}
	offer, err := join.FetchContent(s.ctx, cfg, func(ctx context.Context, cc *join.ContentConn) error {
		dirs, st, err = fetchMissing(ctx, cc, cache, local)
		return err
	})
	switch {
	case err != nil:
		return fmt.Errorf("record: content sync: %w", err)
	case !offer.Shared || offer.Matches:
		return fmt.Errorf("record: content sync: the host shares %v, matches %v: want a shared, differing content", offer.Shared, offer.Matches)
	case st.Fetched == 0:
		return errors.New("record: content sync fetched no file")
	}
	got, err := gamecontent.Load(dirs, "")
	if err != nil {
		return fmt.Errorf("record: the fetched content: %w", err)
	}
	if !slices.Equal(got.Summary(), s.bundle.Summary()) {
		return fmt.Errorf("record: the fetched content's def databases %v are not the host's %v", got.Summary(), s.bundle.Summary())
	}
	return nil
}

// fetchMissing reads the host's manifest, fetches the files of the mods
// local lacks or has in another version, and returns the folders to load.
func fetchMissing(ctx context.Context, cc *join.ContentConn, cache *modsync.Cache, local *modsync.Manifest) ([]string, modsync.Stats, error) {
	m, _, err := cc.Manifest(ctx, modsync.DefaultLimits)
	if err != nil {
		return nil, modsync.Stats{}, err
	}
	differ := map[string]bool{}
	for _, st := range modsync.Compare(m, local) {
		differ[st.PackageID] = st.State != modsync.Same
	}
	f := &modsync.Fetcher{Source: cc, Cache: cache, Limits: modsync.DefaultLimits, Local: local.LocalFiles()}
	st, err := f.Fetch(ctx, modsync.Need(m, func(d *modsync.Mod) bool { return differ[d.PackageID] }))
	if err != nil {
		return nil, st, err
	}
	dirs, err := cache.Dirs(m, local)
	return dirs, st, err
}
