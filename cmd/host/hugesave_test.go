package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/lockhost/lockhost/cmd/internal/cliutil"
	"github.com/lockhost/lockhost/saves"
	"github.com/lockhost/lockhost/saves/savestest"
)

// TestHugeSaveRSS runs the real binary on sparse 2 GiB saves whose
// headers agree with their size: saves inspect, saves list over a folder
// of them, and serve --save each peak under 64 MiB of resident memory.
// The peak is measured by scripts/cmd/peakrss, a small launcher: a child of
// this test binary would report the test's own peak when it is larger.
func TestHugeSaveRSS(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the host and reads 2 GiB of zeros")
	}
	if runtime.GOOS != "linux" {
		t.Skip("scripts/cmd/peakrss reads Linux's getrusage")
	}
	dir := t.TempDir()
	bin := buildTool(t, dir, "github.com/lockhost/lockhost/cmd/host")
	peakrss := buildTool(t, dir, "github.com/lockhost/lockhost/scripts/cmd/peakrss")
	folder := filepath.Join(dir, "saves")
	const size = 2 << 30
	if err := os.Mkdir(folder, 0o755); err != nil {
		t.Fatal(err)
	}
	huge := filepath.Join(folder, "huge"+saves.Ext)
	for _, p := range []string{huge, filepath.Join(folder, "huge2"+saves.Ext), filepath.Join(folder, "huge3"+saves.Ext)} {
		if err := savestest.Sparse(p, size, saves.Meta{GameName: "huge", Tick: 5}); err != nil {
			t.Fatal(err)
		}
	}
	const limit = 64 << 10 // KiB
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"inspect", []string{"saves", "inspect", huge}, cliutil.ExitFailure, "world data"},
		{"list", []string{"saves", "list", folder}, 0, "huge3.lhsave"},
		{"serve", []string{"serve", "--listen", "127.0.0.1:0", "--data-dir", filepath.Join(dir, "data"), "--save", huge}, cliutil.ExitFailure, "world data"},
	} {
		var out bytes.Buffer
		figure := filepath.Join(dir, tc.name+".rss")
		cmd := exec.Command(peakrss, append([]string{"-o", figure, bin}, tc.args...)...)
		cmd.Stdout, cmd.Stderr = &out, &out
		code := exitCode(t, cmd.Run())
		b, err := os.ReadFile(figure)
		if err != nil {
			t.Fatalf("%s: no peak RSS (%v):\n%s", tc.name, err, out.String())
		}
		kib, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
		if err != nil || kib <= 0 {
			t.Fatalf("%s: peak RSS %q", tc.name, b)
		}
		t.Logf("%s of %d GiB: peak RSS %d KiB, exit %d", tc.name, size>>30, kib, code)
		if kib >= limit {
			t.Errorf("%s peaked at %d MiB of RSS, over %d MiB", tc.name, kib>>10, limit>>10)
		}
		if code != tc.code || !strings.Contains(out.String(), tc.want) {
			t.Errorf("%s: exit %d, want %d with %q:\n%s", tc.name, code, tc.code, tc.want, out.String())
		}
	}
}
