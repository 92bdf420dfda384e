package main

import (
	"archive/tar"
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// containerfile is the image recipe the tests hold the built image to.
const containerfile = "../../deploy/agones/Containerfile"

// containerTool is podman, or docker with a running daemon, with the
// arguments that come before every subcommand. podman keeps its images
// in a store of the test's own (vfs: no kernel overlay needed), so a
// test leaves nothing behind in the machine's store.
type containerTool struct {
	name string
	args []string
}

// findContainerTool returns podman, or docker where one can build images
// here (a docker client with no daemon cannot), or ok false.
func findContainerTool(t *testing.T) (containerTool, bool) {
	if _, err := exec.LookPath("podman"); err == nil {
		dir := t.TempDir()
		return containerTool{name: "podman", args: []string{
			"--root", filepath.Join(dir, "root"), "--runroot", filepath.Join(dir, "run"),
			"--storage-driver", "vfs", "--cgroup-manager", "cgroupfs", "--events-backend", "none",
		}}, true
	}
	if _, err := exec.LookPath("docker"); err == nil && exec.Command("docker", "info").Run() == nil {
		return containerTool{name: "docker"}, true
	}
	return containerTool{}, false
}

// cmd runs the tool with args and returns its output; the error carries
// what the tool said on stderr.
func (c containerTool) cmd(args ...string) ([]byte, error) {
	cmd := exec.Command(c.name, append(slices.Clone(c.args), args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return out, errors.New(c.name + " " + args[0] + ": " + err.Error() + ": " + strings.TrimSpace(stderr.String()))
	}
	return out, nil
}

// imageConfig is the part of an image's configuration the Containerfile
// sets.
type imageConfig struct {
	User         string
	Entrypoint   []string
	Cmd          []string
	ExposedPorts map[string]struct{}
}

// writtenConfig reads USER, ENTRYPOINT, CMD and EXPOSE as the
// Containerfile writes them (exec form only, which is all it uses).
func writtenConfig(t *testing.T, path string) (cfg imageConfig, copies map[string]string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cfg.ExposedPorts = map[string]struct{}{}
	copies = map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		word, rest, _ := strings.Cut(line, " ")
		var list []string
		switch word {
		case "USER":
			cfg.User = rest
		case "ENTRYPOINT", "CMD":
			if err := json.Unmarshal([]byte(rest), &list); err != nil {
				t.Fatalf("%s: %s is not in exec form: %v", path, word, err)
			}
			if word == "CMD" {
				cfg.Cmd = list
			} else {
				cfg.Entrypoint = list
			}
		case "EXPOSE":
			for _, p := range strings.Fields(rest) {
				cfg.ExposedPorts[p] = struct{}{}
			}
		case "COPY":
			from, to, _ := strings.Cut(rest, " ")
			copies[strings.TrimPrefix(to, "/")] = from
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return cfg, copies
}

// runRefused reports whether a failed `run` failed because this machine
// does not let the runtime start a container at all (a sandbox that
// refuses setrlimit, namespaces or cgroups), rather than because of the
// image.
func runRefused(err error) bool {
	msg := err.Error()
	for _, s := range []string{"setrlimit", "OCI permission denied", "cgroup", "unshare", "namespace", "newuidmap"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

// TestContainerImage builds deploy/agones/Containerfile from static
// binaries (CGO_ENABLED=0), as the Containerfile's comment says to, and
// checks the image without needing to run it: its entrypoint, command,
// user and ports are the ones written in the Containerfile; its root
// filesystem, exported, holds exactly the host and join binaries that
// were built, byte for byte; and the exported /host prints the same
// --version. Where a container runtime may start containers here, it
// also runs the image. CI installs podman, and there the test does not
// skip.
func TestContainerImage(t *testing.T) {
	if testing.Short() {
		t.Skip("builds an image")
	}
	tool, ok := findContainerTool(t)
	if !ok {
		if os.Getenv("CI") == "true" {
			t.Fatal("CI installs podman, but none is on PATH: the image would go unchecked")
		}
		t.Skip("no container tool here (podman, or docker with a running daemon): the image is not built")
	}
	ctxDir := t.TempDir()
	build := exec.Command("go", "build", "-trimpath", "-o", filepath.Join(ctxDir, "bin")+string(filepath.Separator),
		"github.com/lockhost/lockhost/cmd/host", "github.com/lockhost/lockhost/cmd/join")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("static build: %v\n%s", err, out)
	}
	want, err := exec.Command(filepath.Join(ctxDir, "bin", "host"), "--version").Output()
	if err != nil {
		t.Fatal(err)
	}
	image := "localhost/lockhost-test:" + strconv.FormatInt(time.Now().UnixNano(), 36)
	if _, err := tool.cmd("build", "-f", containerfile, "-t", image, ctxDir); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = tool.cmd("rmi", "-f", image) })

	written, copies := writtenConfig(t, containerfile)
	t.Run("config", func(t *testing.T) {
		out, err := tool.cmd("image", "inspect", "--format", "{{json .Config}}", image)
		if err != nil {
			t.Fatal(err)
		}
		var got imageConfig
		if err := json.Unmarshal(out, &got); err != nil {
			t.Fatalf("image config %s: %v", out, err)
		}
		if got.User != written.User || !slices.Equal(got.Entrypoint, written.Entrypoint) || !slices.Equal(got.Cmd, written.Cmd) {
			t.Fatalf("image user %q entrypoint %q cmd %q, the Containerfile writes %q %q %q",
				got.User, got.Entrypoint, got.Cmd, written.User, written.Entrypoint, written.Cmd)
		}
		for p := range written.ExposedPorts {
			if _, ok := got.ExposedPorts[p]; !ok {
				t.Errorf("the image does not expose %s (exposes %v)", p, got.ExposedPorts)
			}
		}
		if written.User == "" || strings.HasPrefix(written.User, "0") || written.User == "root" {
			t.Errorf("the Containerfile runs the host as %q: any user but root", written.User)
		}
	})

	rootfs := exportRootFS(t, tool, image)
	t.Run("files", func(t *testing.T) {
		var names []string
		for name, data := range rootfs {
			names = append(names, name)
			from, ok := copies[name]
			if !ok {
				t.Errorf("the image holds /%s, which the Containerfile does not copy in", name)
				continue
			}
			built, err := os.ReadFile(filepath.Join(ctxDir, from))
			if err != nil {
				t.Fatal(err)
			}
			if sha256.Sum256(built) != sha256.Sum256(data) {
				t.Errorf("the image's /%s (%d bytes) differs from the built %s (%d bytes)", name, len(data), from, len(built))
			}
		}
		for name := range copies {
			if _, ok := rootfs[name]; !ok {
				t.Errorf("the image lacks /%s (holds %v)", name, names)
			}
		}
	})
	t.Run("version from the exported root", func(t *testing.T) {
		bin := filepath.Join(t.TempDir(), "host")
		if err := os.WriteFile(bin, rootfs[strings.TrimPrefix(written.Entrypoint[0], "/")], 0o755); err != nil {
			t.Fatal(err)
		}
		got, err := exec.Command(bin, "--version").Output()
		if err != nil {
			t.Fatalf("the image's %s --version: %v", written.Entrypoint[0], err)
		}
		if string(got) != string(want) {
			t.Fatalf("the image's host --version = %q, want %q", got, want)
		}
	})
	t.Run("run", func(t *testing.T) {
		got, err := tool.cmd("run", "--rm", "--network", "none", image, "--version")
		if err != nil && runRefused(err) {
			t.Skipf("this machine refuses to start containers, so the image is checked without running it (%v)", err)
		}
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Fatalf("the container's host --version = %q, want %q", got, want)
		}
	})
}

// exportRootFS creates a container of image without starting it and
// reads its exported root filesystem: regular files by path (no leading
// slash). Directories the runtime adds to every container (/dev, /proc,
// /sys, /etc and /run for its mounts) are left out; any other file shows.
func exportRootFS(t *testing.T, tool containerTool, image string) map[string][]byte {
	t.Helper()
	out, err := tool.cmd("create", image)
	if err != nil {
		t.Fatal(err)
	}
	id := strings.TrimSpace(string(out))
	t.Cleanup(func() { _, _ = tool.cmd("rm", "-f", id) })
	tarPath := filepath.Join(t.TempDir(), "rootfs.tar")
	if _, err := tool.cmd("export", "-o", tarPath, id); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(tarPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	files := map[string][]byte{}
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("read the exported root: %v", err)
		}
		name := strings.TrimPrefix(filepath.Clean("/"+h.Name), "/")
		top, _, _ := strings.Cut(name, "/")
		switch top {
		case "dev", "proc", "sys", "etc", "run":
			continue
		}
		if h.Typeflag != tar.TypeReg {
			if h.Typeflag != tar.TypeDir {
				t.Errorf("the image holds /%s of type %c, not a regular file", name, h.Typeflag)
			}
			continue
		}
		if h.Mode&0o111 == 0 {
			t.Errorf("the image's /%s is not executable (mode %o)", name, h.Mode)
		}
		data, err := io.ReadAll(io.LimitReader(tr, 256<<20))
		if err != nil {
			t.Fatal(err)
		}
		files[name] = data
	}
	return files
}
