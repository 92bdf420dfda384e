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

// Info summarises a save for listings. Err is nil when the save passed
// the check made (see Checked); otherwise only Path, Size and Err are
// meaningful.
type Info struct {
	Path string
	Size int64
	Meta Meta
	Maps []MapInfo
	Err  error
	// Checked is true when every byte was checked (Inspect), false when
	// only the header, meta and the body's header were (List).
	Checked bool
}

// MapInfo describes one saved map: its compressed and raw sizes and its
// state hash.
type MapInfo struct {
	ID            int32
	Size, RawSize uint64
	StateHash     uint64
}

// Inspect reads and validates the save at path completely (as Read does)
// and summarises it, in memory independent of the file's size.
func Inspect(path string) Info {
	return summarise(path, true)
}

// InspectHeader summarises the save at path from its header, meta and
// body header only (ReadHeader), in time and memory independent of the
// file's size.
func InspectHeader(path string) Info {
	return summarise(path, false)
}

func summarise(path string, full bool) Info {
	info := Info{Path: path, Checked: full}
	f, err := open(path, full)
	if err != nil {
		if st, serr := os.Stat(path); serr == nil {
			info.Size = st.Size()
		}
		info.Err = err
		return info
	}
	info.Size, info.Meta = f.Size, f.Meta
	info.Maps = make([]MapInfo, len(f.Header.Maps))
	for i, m := range f.Header.Maps {
		info.Maps[i] = MapInfo{ID: m.ID, Size: m.Blob.Size, RawSize: m.Blob.RawSize, StateHash: m.StateHash}
	}
	return info
}

// List summarises every save (*.lhsave, autosaves included) in dir from
// its header and meta (InspectHeader), newest first by Meta.Tick, then by
// modification time. Damaged saves are listed too, with Err set. Use
// Inspect to check a save's every byte.
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
	return inspectSorted(paths, InspectHeader), nil
}

// inspectSorted inspects paths and sorts them newest first.
func inspectSorted(paths []string, inspect func(string) Info) []Info {
	type entry struct {
		info Info
		mod  time.Time
	}
	es := make([]entry, len(paths))
	for i, p := range paths {
		es[i].info = inspect(p)
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
// when there is none. passed lists the saves newer than it, or all of
// them when there is none, that failed the check, with their errors.
// Headers are read first to order them; then only as many saves are
// checked completely as it takes to find a valid one.
func NewestValid(savePath string) (info Info, passed []Info, ok bool) {
	paths, _ := Autosaves(savePath)
	if _, err := os.Stat(savePath); err == nil {
		paths = append([]string{savePath}, paths...)
	}
	for _, in := range inspectSorted(paths, InspectHeader) {
		if in.Err == nil {
			in = Inspect(in.Path)
		}
		if in.Err == nil {
			return in, passed, true
		}
		passed = append(passed, in)
	}
	return Info{}, passed, false
}

// MakeRoom deletes the oldest autosave of savePath to free space after a
// write failed for a full disk, always keeping the newest autosave that
// is valid, so at least one good autosave remains. It returns the path it
// deleted, or "" when there was nothing it could delete.
func MakeRoom(savePath string) (string, error) {
	autos, err := Autosaves(savePath)
	if err != nil {
		return "", err
	}
	keep := ""
	for _, p := range autos {
		if Inspect(p).Err == nil {
			keep = p
			break
		}
	}
	for i := len(autos) - 1; i >= 0; i-- {
		if autos[i] == keep {
			continue
		}
		if err := os.Remove(autos[i]); err != nil && !errors.Is(err, os.ErrNotExist) {
			return "", fmt.Errorf("make room: %w", err)
		}
		return autos[i], nil
	}
	return "", nil
}
