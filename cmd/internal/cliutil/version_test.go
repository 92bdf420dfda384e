package cliutil

import (
	"strconv"
	"strings"
	"testing"
)

func TestVersionStamped(t *testing.T) {
	defer func(v, c string) { version, commit = v, c }(version, commit)
	version, commit = "v1.2.3", "0123456789abcdef0123+changes"
	got := Version(7)
	for _, want := range []string{"v1.2.3", "commit 0123456789ab+changes", "protocol " + strconv.Itoa(7)} {
		if !strings.Contains(got, want) {
			t.Errorf("Version(7) = %q, want %q in it", got, want)
		}
	}
}
