package main

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/lockhost/lockhost/cmd/internal/cliutil"
	gamecontent "github.com/lockhost/lockhost/game/content"
	"github.com/lockhost/lockhost/game/hostcontent"
	"github.com/lockhost/lockhost/lockstep"
	"github.com/lockhost/lockhost/saves"
	"github.com/urfave/cli/v2"
)

// stampFormat dates the names of files and folders moved aside: sortable,
// and valid in file names on every OS (no colons).
const stampFormat = "20060102-150405"

// saveStart is what serve starts from when --save is given.
type saveStart struct {
	path string
	// existing are the save and its autosaves found on disk.
	existing []string
}

// findSave lists the save at path and its autosaves, and checks that the
// folder they live in can be written, so a host that could never save
// stops at once instead of failing every autosave.
func findSave(path string) (*saveStart, error) {
	if err := checkWritable(filepath.Dir(path)); err != nil {
		return nil, cliutil.Usagef("--save %s: %v", path, err)
	}
	st := &saveStart{path: path}
	switch info, err := os.Stat(path); {
	case err == nil && !info.Mode().IsRegular():
		return nil, cliutil.Usagef("--save %s: it is not a file", path)
	case err == nil:
		st.existing = append(st.existing, path)
	case !errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("--save %s: %w", path, err)
	}
	autos, err := saves.Autosaves(path)
	if err != nil {
		return nil, fmt.Errorf("--save %s: %w", path, err)
	}
	st.existing = append(st.existing, autos...)
	return st, nil
}

// checkWritable makes and removes a file in dir.
func checkWritable(dir string) error {
	info, err := os.Stat(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("the folder %s does not exist", dir)
		}
		return fmt.Errorf("the folder %s cannot be read: %w", dir, err)
	}
	if !info.IsDir() {
		return fmt.Errorf("%s is not a folder", dir)
	}
	f, err := os.CreateTemp(dir, ".lockhost-write-check-*")
	if err != nil {
		if cause := errors.Unwrap(err); cause != nil {
			err = cause // the path is said already
		}
		return fmt.Errorf("the folder %s cannot be written, so nothing could be saved there: %w", dir, err)
	}
	name := f.Name()
	f.Close()
	if err := os.Remove(name); err != nil {
		return fmt.Errorf("the folder %s does not let files be removed: %w", dir, err)
	}
	return nil
}

// moveAside moves the save, its autosaves and its players' session
// tokens into a dated folder beside the save, so --force-new starts over without deleting a colony. It
// returns the folder.
func (st *saveStart) moveAside(now time.Time) (string, error) {
	dir, base := filepath.Split(st.path)
	name := strings.TrimSuffix(base, saves.Ext)
	into := filepath.Join(dir, name+".old-"+now.Format(stampFormat))
	for i := 2; ; i++ {
		if _, err := os.Lstat(into); errors.Is(err, fs.ErrNotExist) {
			break
		}
		into = filepath.Join(dir, fmt.Sprintf("%s.old-%s-%d", name, now.Format(stampFormat), i))
	}
	if err := os.Mkdir(into, 0o755); err != nil {
		return "", fmt.Errorf("--force-new: %w", err)
	}
	files := st.existing
	if tokens := saves.TokensPath(st.path); fileExists(tokens) {
		files = append(files[:len(files):len(files)], tokens) // the players of the old world go with it
	}
	for _, p := range files {
		if err := os.Rename(p, filepath.Join(into, filepath.Base(p))); err != nil {
			return "", fmt.Errorf("--force-new: move %s into %s: %w (nothing was deleted)", p, into, err)
		}
	}
	return into, nil
}

// refuseNew is the error of --new over an existing colony.
func (st *saveStart) refuseNew() error {
	return cliutil.Usagef("--new would start over the colony at %s, which exists: %s. "+
		"Run without --new to go on with it, or add --force-new to move these files into a dated folder beside it and start a new world",
		st.path, strings.Join(st.existing, ", "))
}

// load picks the newest valid of the save and its autosaves, says which
// and why, and rebuilds its world. A damaged save file is never passed
// over silently: without recover the error names the damage and the
// autosave that --recover would take; with it the damaged file is kept as
// <save>.damaged-<time> (so the final save cannot overwrite the evidence)
// and the autosave is loaded.
func (st *saveStart) load(bundle *gamecontent.Bundle, recover bool, log *slog.Logger) (lockstep.Sim, *saves.File, error) {
	if len(st.existing) == 0 {
		return nil, nil, cliutil.Usagef("there is no save at %s, nor autosaves beside it; add --new to start a new world there", st.path)
	}
	best, passed, ok := saves.NewestValid(st.path)
	var mainErr error
	for _, p := range passed {
		if p.Path == st.path {
			mainErr = p.Err
		}
	}
	if mainErr != nil {
		if !ok {
			return nil, nil, fmt.Errorf("save %s cannot be loaded: %w (and no valid autosave was found beside it)", st.path, mainErr)
		}
		if !recover {
			return nil, nil, fmt.Errorf("save %s cannot be loaded: %w\nThe newest valid autosave is %s (tick %d, saved %s). Start from it with --recover (the damaged file is kept as %s.damaged-<time>)",
				st.path, mainErr, best.Path, best.Meta.Tick, time.Unix(best.Meta.Created, 0).Format(time.RFC3339), filepath.Base(st.path))
		}
		kept := st.path + ".damaged-" + time.Now().Format(stampFormat)
		if err := os.Rename(st.path, kept); err != nil {
			return nil, nil, fmt.Errorf("--recover: keep the damaged save: %w", err)
		}
		log.Warn("the save is damaged; kept it aside and recovering from the newest valid autosave",
			"damaged", st.path, "kept_as", kept, "err", mainErr, "autosave", best.Path, "tick", best.Meta.Tick)
	}
	if !ok {
		var why []string
		for _, p := range passed {
			why = append(why, p.Err.Error())
		}
		return nil, nil, fmt.Errorf("no valid save at %s or beside it: %s", st.path, strings.Join(why, "; "))
	}
	for _, p := range passed {
		if p.Path != st.path {
			log.Warn("passed over a damaged autosave newer than the save loaded", "path", p.Path, "err", p.Err)
		}
	}
	var reason string
	switch {
	case best.Path == st.path:
		reason = "the save is the newest valid file"
	case mainErr != nil:
		reason = "the save is damaged (--recover)"
	case st.existing[0] != st.path:
		reason = "there is no save file, only autosaves: the host did not stop cleanly last time"
	default:
		reason = "an autosave is newer than the save: the host did not stop cleanly last time"
	}
	log.Info("loading the newest valid save", "path", best.Path, "tick", best.Meta.Tick, "why", reason)
	f, err := saves.Read(best.Path)
	if err != nil {
		return nil, nil, err
	}
	if err := sameContent(f.Meta, bundle); err != nil {
		return nil, nil, fmt.Errorf("save %s: %w", best.Path, err)
	}
	prepareMemory(log, int64(min(f.Header.RawSize(), 1<<62)))
	sim, err := hostcontent.LoadSave(bundle, f)
	if err != nil {
		return nil, nil, fmt.Errorf("load %s: %w", best.Path, err)
	}
	return sim, f, nil
}

// finalSaveFailed is the error of a host whose final save failed: which
// save failed, why, and where the newest good save is.
func finalSaveFailed(path, why string) error {
	msg := fmt.Sprintf("the final save to %s failed (%s)", path, why)
	if best, _, ok := saves.NewestValid(path); ok {
		msg += fmt.Sprintf("; the newest good save is %s (tick %d)", best.Path, best.Meta.Tick)
	} else {
		msg += "; no good save of this session is on disk"
	}
	return cli.Exit(msg, cliutil.ExitSaveFailed)
}

// fileExists reports whether path names something on disk.
func fileExists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}
