package host_test

import (
	"strings"
	"testing"

	"github.com/lockhost/lockhost/host"
	"github.com/lockhost/lockhost/lockstep/locksteptest"
	"github.com/lockhost/lockhost/wire"
)

// TestContentWithinWireLimits holds section 4 ids 16 and 17 of the spec: a
// host refuses to start with a game version or a mod ID it could not put
// in Server_ModList, rather than fail every handshake.
func TestContentWithinWireLimits(t *testing.T) {
	tests := []struct {
		name    string
		content host.Content
		wantErr string
	}{
		{"longest version and mod ID", host.Content{GameVersion: strings.Repeat("v", wire.MaxGameStringBytes),
			Mods: []string{strings.Repeat("m", wire.MaxModIDBytes)}}, ""},
		{"version too long", host.Content{GameVersion: strings.Repeat("v", wire.MaxGameStringBytes+1)}, "game version"},
		{"mod ID too long", host.Content{Mods: []string{"core", strings.Repeat("m", wire.MaxModIDBytes+1)}}, "mod"},
		{"too many mods", host.Content{Mods: make([]string, wire.MaxMods+1)}, "mods"},
	}
	for _, tc := range tests {
		_, err := host.New(host.Config{}, tc.content, locksteptest.New(1, 8))
		switch {
		case tc.wantErr == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
			t.Errorf("%s: New: %v, want an error about the %s", tc.name, err, tc.wantErr)
		}
	}
}
