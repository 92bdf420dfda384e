package main

import (
	"errors"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lockhost/lockhost/cmd/internal/cliutil"
	"github.com/lockhost/lockhost/operator/web"
	"github.com/lockhost/lockhost/testing/syncbuf"
	"github.com/lockhost/lockhost/testing/testkit"
)

// TestStatusToken runs the real host with --http and a token, from a file
// or from the environment: the page, the JSON and /metrics ask for it,
// /healthz does not, and the token never reaches the log. A token file
// without --http, or an empty one, is a usage error.
func TestStatusToken(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the host")
	}
	dir := t.TempDir()
	hostBin := buildTool(t, dir, "github.com/lockhost/lockhost/cmd/host")
	const fileToken, envToken = "from-the-file-3f9c2a", "from-the-env-81d0b7"
	tokenFile := writeFile(t, "token.txt", fileToken+"\nsecond line ignored\n")
	emptyFile := writeFile(t, "empty.txt", "\n")

	serve := func(env []string, args ...string) *exec.Cmd {
		cmd := exec.Command(hostBin, append([]string{"serve", "--listen", "127.0.0.1:0", "--maps", "1", "--map-size", "64",
			"--data-dir", filepath.Join(dir, "data"), "--autosave", "-1s"}, args...)...)
		cmd.Env = append(os.Environ(), env...)
		return cmd
	}

	for _, c := range []struct {
		name  string
		env   []string
		args  []string
		token string
	}{
		{"file", nil, []string{"--http-token-file", tokenFile}, fileToken},
		{"environment", []string{web.TokenEnv + "=" + envToken}, nil, envToken},
		{"environment over a file in the config", []string{web.TokenEnv + "=" + envToken},
			[]string{"--config", writeFile(t, "host.toml", "http-token-file = \""+emptyFile+"\"\n")}, envToken},
	} {
		t.Run(c.name, func(t *testing.T) {
			cmd := serve(c.env, append([]string{"--http", "127.0.0.1:0"}, c.args...)...)
			var stderr syncbuf.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			t.Cleanup(func() { _ = cmd.Process.Kill(); <-done })
			base := waitStatusPage(t, &stderr, done)
			client := &http.Client{Timeout: 10 * time.Second}
			get := func(path, auth string) int {
				req, _ := http.NewRequest("GET", base+path, nil)
				if auth != "" {
					req.Header.Set("Authorization", auth)
				}
				resp, err := client.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				return resp.StatusCode
			}
			// /healthz answers 503 until the session first publishes its
			// state, which may come just after the page is up.
			testkit.WaitWithin(t, 30*time.Second, "/healthz 200", func() bool { return get("healthz", "") == 200 })
			for _, r := range []struct {
				path, auth string
				want       int
			}{
				{"healthz", "", 200},
				{"metrics", "", 401},
				{"api/overview", "", 401},
				{"", "", 401},
				{"metrics", "Bearer " + c.token, 200},
				{"api/overview", "Bearer " + c.token, 200},
				{"", "Bearer " + c.token, 200},
				{"metrics", "Bearer " + fileToken + envToken, 401},
			} {
				if got := get(r.path, r.auth); got != r.want {
					t.Errorf("GET /%s with %q: %d, want %d", r.path, r.auth, got, r.want)
				}
			}
			if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
			select {
			case err := <-done:
				done <- err // for the cleanup
				if err != nil {
					t.Fatalf("host exited with %v:\n%s", err, stderr.String())
				}
			case <-time.After(20 * time.Second):
				t.Fatal("host still running 20 s after SIGTERM")
			}
			if out := stderr.String(); strings.Contains(out, c.token) {
				t.Errorf("the token is in the log:\n%s", out)
			}
		})
	}

	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"token file without --http", []string{"--http-token-file", tokenFile}, "--http-token-file needs --http"},
		{"empty token file", []string{"--http", "127.0.0.1:0", "--http-token-file", emptyFile}, "the first line is empty"},
		{"missing token file", []string{"--http", "127.0.0.1:0", "--http-token-file", filepath.Join(dir, "nope")}, "no such file"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cmd := serve(nil, c.args...)
			var stderr syncbuf.Buffer
			cmd.Stderr = &stderr
			err := cmd.Run()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != cliutil.ExitUsage {
				t.Fatalf("%v, want exit %d:\n%s", err, cliutil.ExitUsage, stderr.String())
			}
			if !strings.Contains(stderr.String(), c.want) {
				t.Fatalf("stderr lacks %q:\n%s", c.want, stderr.String())
			}
		})
	}
}
