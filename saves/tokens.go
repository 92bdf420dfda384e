package saves

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"

	"github.com/lockhost/lockhost/internal/atomicfile"
)

// TokensExt is the file name extension of a save's session tokens.
const TokensExt = ".tokens"

// MaxTokensFile bounds the size of a tokens file that is read.
const MaxTokensFile = 4 << 20

// TokensVersion is the version of the tokens file written.
const TokensVersion = 1

// TokensPath is where the session tokens of the save at path are kept:
// dir/NAME.tokens beside dir/NAME.lhsave. One file serves the save and
// its autosaves: a player is the same player whichever of them is loaded.
func TokensPath(path string) string {
	return strings.TrimSuffix(path, Ext) + TokensExt
}

// Tokens is what a host keeps of its session tokens, so that after a
// restart from the save (a clean stop or a crash) a player rejoins as
// itself: the same player ID, and so the same faction. It holds the
// tokens' SHA-256 hashes, never the tokens: the file lets a host check a
// token, not make one.
type Tokens struct {
	Version int `json:"version"`
	// LastID is the highest player ID the host handed out: a restarted
	// host goes on above it, so nobody new takes a player's ID.
	LastID  int32        `json:"last_id"`
	Players []TokenEntry `json:"players"`
}

// TokenEntry is one session token and the player it rejoins as.
type TokenEntry struct {
	// Hash is the SHA-256 of the token.
	Hash      []byte `json:"sha256"`
	ID        int32  `json:"id"`
	Name      string `json:"name"`
	Spectator bool   `json:"spectator,omitempty"`
	// Left is when the player left, in Unix milliseconds: the token's
	// grace period runs from then. 0 while it was online.
	Left int64 `json:"left,omitempty"`
}

// WriteTokens writes t to path atomically (package internal/atomicfile),
// readable and writable by the owner only where the OS has permission
// bits.
func WriteTokens(path string, t Tokens) error {
	t.Version = TokensVersion
	b, err := json.MarshalIndent(t, "", "\t")
	if err != nil {
		return fmt.Errorf("encode tokens: %w", err)
	}
	if err := atomicfile.WriteFile(path, append(b, '\n'), 0o600); err != nil {
		return fmt.Errorf("write tokens %s: %w", path, err)
	}
	return nil
}

// ReadTokens reads the tokens file at path. A file that does not exist
// is no tokens and no error.
func ReadTokens(path string) (Tokens, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return Tokens{}, nil
	}
	if err != nil {
		return Tokens{}, fmt.Errorf("read tokens: %w", err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, MaxTokensFile+1))
	if err != nil {
		return Tokens{}, fmt.Errorf("read tokens %s: %w", path, err)
	}
	if len(b) > MaxTokensFile {
		return Tokens{}, fmt.Errorf("tokens %s: larger than %d bytes", path, MaxTokensFile)
	}
	var t Tokens
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&t); err != nil {
		return Tokens{}, fmt.Errorf("tokens %s: %w", path, err)
	}
	if t.Version != TokensVersion {
		return Tokens{}, fmt.Errorf("tokens %s: version %d, this host reads %d", path, t.Version, TokensVersion)
	}
	for i, p := range t.Players {
		if len(p.Hash) != 32 || p.ID <= 0 || p.ID > t.LastID {
			return Tokens{}, fmt.Errorf("tokens %s: entry %d is damaged (a hash of %d bytes, player %d of at most %d)", path, i, len(p.Hash), p.ID, t.LastID)
		}
	}
	return t, nil
}
