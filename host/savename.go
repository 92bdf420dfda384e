package host

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/lockhost/lockhost/internal/savelock"
	"github.com/lockhost/lockhost/saves"
)

// MaxSaveName bounds a save name given to SaveNow, in bytes.
const MaxSaveName = 64

// SavePath is the file SaveNow writes for name: the host's save file when
// name is empty, else NAME.lhsave in the save file's folder. An admin
// command is no way to write elsewhere or to destroy a file, so name must
// be plain (letters, digits, '-', '_' and '.' inside; no separator, no
// "..", the extension optional), and the file must not exist unless it is
// a valid lockhost save that no other host holds.
func (s *Server) SavePath(name string) (string, error) {
	own := s.cfg.Save.Path
	if own == "" {
		return "", errors.New("the host has no save folder: start it with a save file (--save) to save")
	}
	if name == "" {
		return own, nil
	}
	if err := checkSaveName(name); err != nil {
		return "", err
	}
	path := filepath.Join(filepath.Dir(own), strings.TrimSuffix(name, saves.Ext)+saves.Ext)
	if path == own {
		return own, nil
	}
	switch info, err := os.Lstat(path); {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return "", fmt.Errorf("save %s: %w", path, err)
	case !info.Mode().IsRegular():
		return "", fmt.Errorf("%s exists and is not a file; it is not replaced: choose another name", path)
	default:
		if in := saves.Inspect(path); errors.Is(in.Err, saves.ErrNotSave) {
			return "", fmt.Errorf("%s exists and is not a lockhost save; it is not replaced: choose another name", path)
		} else if in.Err != nil {
			return "", fmt.Errorf("%s is a damaged save (%v); it is kept as it is: choose another name", path, in.Err)
		}
	}
	if err := savelock.Check(path); err != nil {
		return "", err
	}
	return path, nil
}

// checkSaveName refuses a name that is not plain.
func checkSaveName(name string) error {
	bad := len(name) > MaxSaveName || name[0] == '.' || strings.Contains(name, "..")
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.') {
			bad = true
		}
	}
	if bad {
		return fmt.Errorf("save %q: give a plain name such as before-raid (up to %d letters, digits, '-', '_' or '.'; no folder, no \"..\"): it is written as NAME%s in the save folder",
			name, MaxSaveName, saves.Ext)
	}
	return nil
}
