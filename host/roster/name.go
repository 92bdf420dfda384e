package roster

import (
	"errors"
	"unicode/utf8"
)

// Username length limits, inclusive.
const (
	MinNameLen = 3
	MaxNameLen = 15
)

// Admission errors, one per rule.
var (
	ErrNameLength     = errors.New("username must be 3 to 15 characters")
	ErrNameChars      = errors.New("username may only contain A-Z, a-z, 0-9 and _")
	ErrNameTaken      = errors.New("username is already online")
	ErrFull           = errors.New("session is full")
	ErrSpectatorsFull = errors.New("no room for more spectators")
	ErrUnknownPlayer  = errors.New("no such player")
)

// ValidateName checks the username rules: 3 to 15 characters, each one of
// A-Z, a-z, 0-9 or underscore. Length counts characters, not bytes, so a
// short name with an accent is refused for its characters.
func ValidateName(name string) error {
	if n := utf8.RuneCountInString(name); n < MinNameLen || n > MaxNameLen {
		return ErrNameLength
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			return ErrNameChars
		}
	}
	return nil
}

// foldName is the key under which names are unique: ASCII lower case
// (ValidateName admits only ASCII).
func foldName(name string) string {
	b := []byte(name)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}
