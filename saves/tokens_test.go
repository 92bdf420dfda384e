package saves

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestTokensRoundTrip: tokens written read back the same, owner-only; a
// missing file is no tokens; beside NAME.lhsave is NAME.tokens.
func TestTokensRoundTrip(t *testing.T) {
	dir := t.TempDir()
	path := TokensPath(filepath.Join(dir, "colony"+Ext))
	if want := filepath.Join(dir, "colony"+TokensExt); path != want {
		t.Fatalf("TokensPath: %s, want %s", path, want)
	}
	if tk, err := ReadTokens(path); err != nil || len(tk.Players) != 0 {
		t.Fatalf("missing file: %+v, %v", tk, err)
	}
	in := Tokens{LastID: 7, Players: []TokenEntry{
		{Hash: bytes.Repeat([]byte{1}, 32), ID: 3, Name: "Alice"},
		{Hash: bytes.Repeat([]byte{2}, 32), ID: 7, Name: "Eve", Spectator: true, Left: 1700000000123},
	}}
	if err := WriteTokens(path, in); err != nil {
		t.Fatal(err)
	}
	out, err := ReadTokens(path)
	if err != nil {
		t.Fatal(err)
	}
	if out.Version != TokensVersion || out.LastID != 7 || len(out.Players) != 2 || out.Players[1].Name != "Eve" ||
		!out.Players[1].Spectator || out.Players[1].Left != 1700000000123 || !bytes.Equal(out.Players[0].Hash, in.Players[0].Hash) {
		t.Fatalf("read back %+v", out)
	}
	if st, err := os.Stat(path); err != nil {
		t.Fatal(err)
	} else if runtime.GOOS != "windows" && st.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v, want 0600", st.Mode().Perm())
	}
}

// TestTokensRefused: a damaged or foreign tokens file is refused with
// its path named, never half taken.
func TestTokensRefused(t *testing.T) {
	hash := `"AQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQE="`
	for _, tc := range []struct{ name, body string }{
		{"not json", "{"},
		{"other version", `{"version": 2, "last_id": 1, "players": []}`},
		{"unknown field", `{"version": 1, "last_id": 1, "players": [], "extra": 1}`},
		{"short hash", `{"version": 1, "last_id": 1, "players": [{"sha256": "AQE=", "id": 1, "name": "A"}]}`},
		{"id above the last", `{"version": 1, "last_id": 1, "players": [{"sha256": ` + hash + `, "id": 2, "name": "A"}]}`},
		{"id zero", `{"version": 1, "last_id": 1, "players": [{"sha256": ` + hash + `, "id": 0, "name": "A"}]}`},
		{"too large", `{"version": 1, "last_id": 1, "players": []}` + strings.Repeat(" ", MaxTokensFile)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "colony"+TokensExt)
			if err := os.WriteFile(path, []byte(tc.body), 0o600); err != nil {
				t.Fatal(err)
			}
			if _, err := ReadTokens(path); err == nil || !strings.Contains(err.Error(), path) {
				t.Fatalf("err %v, want a refusal naming %s", err, path)
			}
		})
	}
}
