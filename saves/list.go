package saves

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Info summarises a save for listings. Err is nil when the save is valid;
// otherwise only Path, Size and Err are meaningful.
type Info struct {
	Path string
	Size int64
	Meta Meta
	Maps []MapInfo
	Err  error
}

// MapInfo describes one saved map: its compressed and raw sizes and its
// state hash.
type MapInfo struct {
	ID            int32
	Size, RawSize uint64
	StateHash     uint64
}

// Inspect reads and validates the save at path (as Read does) and
// summarises it.
func Inspect(path string) Info {
	info := Info{Path: path}
	f, err := Read(path)
	if err != nil {
		if st, serr := os.Stat(path); serr == nil {
			info.Size = st.Size()
		}
		info.Err = err
		return info
	}
	info.Size, info.Meta = f.Size, f.Meta
	info.Maps = make([]MapInfo, len(f.Body.Header.Maps))
	for i, m := range f.Body.Header.Maps {
		info.Maps[i] = MapInfo{ID: m.ID, Size: m.Blob.Size, RawSize: m.Blob.RawSize, StateHash: m.StateHash}
	}
	return info
}

// List inspects every save (*.lhsave, autosaves included) in dir, newest
// first by Meta.Tick, then by modification time. Damaged saves are listed
// too, with Err set.
func List(dir string) ([]Info, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("list saves: %w", err)
	}
	var paths []string
	for _, e := range entries {
		if e.Type().IsRegular() && strings.HasSuffix(e.Name(), Ext) && !strings.HasPrefix(e.Name(), ".") {
			paths = append(paths, filepath.Join(dir, e.Name()))
		}
	}
	return inspectSorted(paths), nil
}

// inspectSorted inspects paths and sorts them newest first.
func inspectSorted(paths []string) []Info {
	type entry struct {
		info Info
		mod  time.Time
	}
	es := make([]entry, len(paths))
	for i, p := range paths {
		es[i].info = Inspect(p)
		if st, err := os.Stat(p); err == nil {
			es[i].mod = st.ModTime()
		}
	}
	slices.SortStableFunc(es, func(a, b entry) int {
		if c := cmp.Compare(b.info.Meta.Tick, a.info.Meta.Tick); c != 0 {
			return c
		}
		return b.mod.Compare(a.mod)
	})
	out := make([]Info, len(es))
	for i, e := range es {
		out[i] = e.info
	}
	return out
}

// autoInfix separates a save's name from an autosave's tick.
const autoInfix = ".auto-"

// tickDigits is the width of an autosave's tick, enough for any uint64,
// so that names sort as their ticks do.
const tickDigits = 20

// saveName is the save's file name without its extension.
func saveName(savePath string) (dir, name string) {
	dir, base := filepath.Split(savePath)
	if dir == "" {
		dir = "."
	}
	return dir, strings.TrimSuffix(base, Ext)
}

// AutosavePath is the autosave of savePath at tick, beside it:
// dir/NAME.auto-<tick, 20 digits>.lhsave.
func AutosavePath(savePath string, tick uint64) string {
	dir, name := saveName(savePath)
	return filepath.Join(dir, fmt.Sprintf("%s%s%0*d%s", name, autoInfix, tickDigits, tick, Ext))
}

// autosaveTick parses an autosave's file name for the save called name.
func autosaveTick(file, name string) (uint64, bool) {
	rest, ok := strings.CutPrefix(file, name+autoInfix)
	if !ok {
		return 0, false
	}
	digits, ok := strings.CutSuffix(rest, Ext)
	if !ok || len(digits) != tickDigits {
		return 0, false
	}
	for _, c := range digits {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	t, err := strconv.ParseUint(digits, 10, 64)
	return t, err == nil
}

// Autosaves lists the existing autosaves of savePath, newest (highest
// tick) first.
func Autosaves(savePath string) ([]string, error) {
	dir, name := saveName(savePath)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("list autosaves: %w", err)
	}
	type auto struct {
		path string
		tick uint64
	}
	var autos []auto
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		if t, ok := autosaveTick(e.Name(), name); ok {
			autos = append(autos, auto{filepath.Join(dir, e.Name()), t})
		}
	}
	slices.SortFunc(autos, func(a, b auto) int { return cmp.Compare(b.tick, a.tick) })
	out := make([]string, len(autos))
	for i, a := range autos {
		out[i] = a.path
	}
	return out, nil
}

// PruneAutosaves deletes all but the newest keep autosaves of savePath.
func PruneAutosaves(savePath string, keep int) error {
	if keep < 0 {
		return fmt.Errorf("prune autosaves: keep %d", keep)
	}
	autos, err := Autosaves(savePath)
	if err != nil {
		return err
	}
	var errs []error
	for _, p := range autos[min(keep, len(autos)):] {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, fmt.Errorf("prune autosaves: %w", err))
		}
	}
	return errors.Join(errs...)
}

// NewestValid is the newest save (by Meta.Tick, then modification time)
// among savePath and its autosaves that Inspect finds valid; ok is false
// when there is none.
func NewestValid(savePath string) (info Info, ok bool) {
	paths, _ := Autosaves(savePath)
	if _, err := os.Stat(savePath); err == nil {
		paths = append([]string{savePath}, paths...)
	}
	for _, in := range inspectSorted(paths) {
		if in.Err == nil {
			return in, true
		}
	}
	return Info{}, false
}
