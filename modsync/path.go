package modsync

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"
)

// Path limits: a manifest path is at most MaxPathLen bytes, of at most
// MaxPathDepth segments of at most MaxSegmentLen bytes each.
const (
	MaxPathLen    = 512
	MaxPathDepth  = 32
	MaxSegmentLen = 255
)

// ErrUnsafePath is wrapped by every error of CheckPath and CheckModPaths.
var ErrUnsafePath = errors.New("unsafe path")

// CheckPath reports whether p may name a file of a mod in a manifest: a
// relative path of '/'-separated segments that means the same file on
// every operating system the game runs on, inside the mod's folder. It
// refuses an empty or over-long path, invalid UTF-8, a leading '/', a
// backslash, a ':' (drive letters, NTFS streams), control characters and
// the characters Windows forbids (< > " | ? *), empty segments, "." and
// "..", a segment ending in a dot or a space, and a segment whose name
// before its first dot is a Windows device name (CON, PRN, AUX, NUL,
// COM0-9, LPT0-9, CONIN$, CONOUT$, in any letter case, trailing spaces
// ignored), in any segment.
func CheckPath(p string) error {
	if p == "" {
		return fmt.Errorf("%w: empty", ErrUnsafePath)
	}
	if len(p) > MaxPathLen {
		return fmt.Errorf("%w: %d bytes, over %d", ErrUnsafePath, len(p), MaxPathLen)
	}
	if !utf8.ValidString(p) {
		return fmt.Errorf("%w: %q is not UTF-8", ErrUnsafePath, p)
	}
	for _, r := range p {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || strings.ContainsRune(`\:<>"|?*`, r) {
			return fmt.Errorf("%w: %q holds the character %U", ErrUnsafePath, p, r)
		}
	}
	segs := strings.Split(p, "/")
	if len(segs) > MaxPathDepth {
		return fmt.Errorf("%w: %q is %d segments deep, over %d", ErrUnsafePath, p, len(segs), MaxPathDepth)
	}
	for _, s := range segs {
		if err := checkSegment(s); err != nil {
			return fmt.Errorf("%w: %q: %s", ErrUnsafePath, p, err.Error())
		}
	}
	return nil
}

// checkSegment checks one segment of a path for CheckPath.
func checkSegment(s string) error {
	switch {
	case s == "":
		return errors.New("empty segment (leading, trailing or double '/')")
	case s == "." || s == "..":
		return fmt.Errorf("segment %q", s)
	case len(s) > MaxSegmentLen:
		return fmt.Errorf("segment of %d bytes, over %d", len(s), MaxSegmentLen)
	case strings.HasSuffix(s, ".") || strings.HasSuffix(s, " "):
		return fmt.Errorf("segment %q ends in a dot or a space", s)
	}
	stem, _, _ := strings.Cut(s, ".")
	stem = strings.ToUpper(strings.TrimRight(stem, " "))
	if isDeviceName(stem) {
		return fmt.Errorf("segment %q is a Windows device name", s)
	}
	return nil
}

// isDeviceName reports whether an upper-case stem is a Windows device.
func isDeviceName(stem string) bool {
	switch stem {
	case "CON", "PRN", "AUX", "NUL", "CONIN$", "CONOUT$":
		return true
	}
	if len(stem) >= 4 && (strings.HasPrefix(stem, "COM") || strings.HasPrefix(stem, "LPT")) {
		switch stem[3:] {
		case "0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "¹", "²", "³":
			return true
		}
	}
	return false
}

// foldKey is the key under which two paths are the same file on a
// case-insensitive or normalising file system (Windows, macOS): full
// Unicode case folding, then NFC. It folds more than any one file system
// does, so two paths with different keys are different files everywhere.
func foldKey(p string) string {
	return norm.NFC.String(cases.Fold().String(norm.NFD.String(p)))
}

// CheckModPaths checks the paths of one mod's files: each must pass
// CheckPath, and no two may name the same file, or a file and a folder,
// once letter case and Unicode normalisation are ignored.
func CheckModPaths(paths []string) error {
	files := make(map[string]string, len(paths))
	dirs := map[string]string{}
	for _, p := range paths {
		if err := CheckPath(p); err != nil {
			return err
		}
		k := foldKey(p)
		if q, dup := files[k]; dup {
			return fmt.Errorf("%w: %q and %q are the same file where letter case does not count", ErrUnsafePath, q, p)
		}
		if q, dup := dirs[k]; dup {
			return fmt.Errorf("%w: %q is a file and a folder of %q", ErrUnsafePath, p, q)
		}
		files[k] = p
		for i := len(k) - 1; i > 0; i-- {
			if k[i] != '/' {
				continue
			}
			d := k[:i]
			if q, clash := files[d]; clash {
				return fmt.Errorf("%w: %q is a file and a folder of %q", ErrUnsafePath, q, p)
			}
			if _, seen := dirs[d]; seen {
				break
			}
			dirs[d] = p
		}
	}
	return nil
}
