// Package agonestest runs Agones' own SDK server in local mode for tests:
// the real REST gateway a host speaks to in its pod, without Kubernetes.
// The server is the gzipped binary in shared/agones beside the
// repository; where it is absent the test is skipped with a message.
package agonestest

import (
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/lockhost/lockhost/testing/syncbuf"
)

// serverGz is the SDK server's file name in shared/agones.
const serverGz = "sdk-server-v1.56.0-4-gb19d5fe78.gz"

// GameServer is a local GameServer with a players List of capacity 8, as
// the SDK server reads it with -f.
const GameServer = `apiVersion: agones.dev/v1
kind: GameServer
metadata:
  name: lockhost-test
spec:
  lists:
    players:
      capacity: 8
  template:
    spec:
      containers:
      - name: host
        image: lockhost
status:
  lists:
    players:
      capacity: 8
      values: []
`

// SDK is a running SDK server.
type SDK struct {
	// Port is its REST port.
	Port int
	// Log is its log (JSON lines), as far as it has written.
	Log *syncbuf.Buffer
}

// sharedDir finds shared/agones in the folder that holds the repository.
func sharedDir() (string, error) {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return "", errors.New("no caller")
	}
	dir := filepath.Dir(file)
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(filepath.Dir(dir), "shared", "agones"), nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("go.mod not found above " + filepath.Dir(file))
		}
		dir = parent
	}
}

// SharedFile returns the path of name in shared/agones, skipping the
// test where it is absent.
func SharedFile(t *testing.T, name string) string {
	t.Helper()
	dir, err := sharedDir()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name)
	if _, err := os.Stat(path); err != nil {
		t.Skipf("%s not found (%v): put shared/agones beside the repository to run this test", name, err)
	}
	return path
}

// Start runs the SDK server in local mode on free ports with the
// GameServer gs, until the test ends. It skips the test where
// shared/agones is absent or the platform is not linux/amd64.
func Start(t *testing.T, gs string) *SDK {
	t.Helper()
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		t.Skip("the Agones SDK server in shared/agones is built for linux/amd64")
	}
	gz := SharedFile(t, serverGz)
	tmp := t.TempDir()
	bin := filepath.Join(tmp, "sdk-server")
	if err := gunzip(gz, bin); err != nil {
		t.Fatal(err)
	}
	gsFile := filepath.Join(tmp, "gameserver.yaml")
	if err := os.WriteFile(gsFile, []byte(gs), 0o600); err != nil {
		t.Fatal(err)
	}
	ports := freePorts(t, 3)
	sdk := &SDK{Port: ports[0], Log: &syncbuf.Buffer{}}
	cmd := exec.Command(bin, "--local", "-f", gsFile, "--address", "127.0.0.1",
		"--http-port", strconv.Itoa(ports[0]), "--grpc-port", strconv.Itoa(ports[1]),
		"--health-port", strconv.Itoa(ports[2]), "--graceful-termination=false")
	cmd.Stdout, cmd.Stderr = sdk.Log, sdk.Log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("SDK server log:\n%s", sdk.Log)
		}
	})
	if err := waitServing(ports[0]); err != nil {
		t.Fatalf("%v\nSDK server log:\n%s", err, sdk.Log)
	}
	return sdk
}

// gunzip writes the executable the gzip file src holds to dst.
func gunzip(src, dst string) error {
	f, err := os.Open(src)
	if err != nil {
		return err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return fmt.Errorf("%s: %w", src, err)
	}
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o700)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, zr); err != nil {
		out.Close()
		return fmt.Errorf("unpacking %s: %w", src, err)
	}
	return out.Close()
}

// freePorts returns n ports free on loopback a moment ago.
func freePorts(t *testing.T, n int) []int {
	t.Helper()
	ports := make([]int, 0, n)
	var lns []net.Listener
	for range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		lns = append(lns, ln)
		ports = append(ports, ln.Addr().(*net.TCPAddr).Port)
	}
	for _, ln := range lns {
		ln.Close()
	}
	return ports
}

// waitServing waits until the REST gateway answers /gameserver.
func waitServing(port int) error {
	url := "http://127.0.0.1:" + strconv.Itoa(port) + "/gameserver"
	var last error
	for range 200 {
		resp, err := http.Get(url)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			err = fmt.Errorf("HTTP %d", resp.StatusCode)
		}
		last = err
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("the SDK server never answered on port %d: %w", port, last)
}
