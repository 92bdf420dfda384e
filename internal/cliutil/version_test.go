package cliutil

import (
	"strconv"
	"strings"
	"testing"

	"github.com/lockhost/lockhost/wire"
)

func TestVersionStamped(t *testing.T) {
	defer func(v, c string) { version, commit = v, c }(version, commit)
	version, commit = "v1.2.3", "0123456789abcdef0123+changes"
	got := Version()
	for _, want := range []string{"v1.2.3", "commit 0123456789ab+changes", "protocol " + strconv.Itoa(int(wire.ProtocolVersion))} {
		if !strings.Contains(got, want) {
			t.Errorf("Version() = %q, want %q in it", got, want)
		}
	}
}
