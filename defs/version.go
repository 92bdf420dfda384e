package defs

import (
	"fmt"
	"strconv"
	"strings"
)

// DefaultGameVersion is the game version a scan reads version folders and
// LoadFolders.xml entries for when none is given: the newest RimWorld
// version lockhost knows.
const DefaultGameVersion = "1.6"

// maxVersionParts bounds the parts of a game version ("1.6.4633" has 3).
const maxVersionParts = 4

// CheckGameVersion returns an error unless s is a game version: two to
// four non-negative integers separated by dots, such as 1.6 or 1.5.4104.
func CheckGameVersion(s string) error {
	parts := strings.Split(s, ".")
	bad := len(parts) < 2 || len(parts) > maxVersionParts
	for _, p := range parts {
		if bad {
			break
		}
		if p == "" || len(p) > 6 {
			bad = true
			break
		}
		if _, err := strconv.ParseUint(p, 10, 32); err != nil {
			bad = true
		}
	}
	if bad {
		return fmt.Errorf("game version %q is not a version such as %s", s, DefaultGameVersion)
	}
	return nil
}

// GameVersionOrDefault returns v, or DefaultGameVersion when v is empty.
// Every tool picks version folders through it, so that scans, hosts and
// joiners read the same folders for the same flags.
func GameVersionOrDefault(v string) string {
	if v == "" {
		return DefaultGameVersion
	}
	return v
}
