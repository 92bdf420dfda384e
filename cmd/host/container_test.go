package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// containerTool returns podman, or docker, where one can build and run
// images here (a docker client with no daemon cannot), or "".
func containerTool() string {
	for _, tool := range []string{"podman", "docker"} {
		if _, err := exec.LookPath(tool); err != nil {
			continue
		}
		if exec.Command(tool, "info").Run() == nil {
			return tool
		}
	}
	return ""
}

// TestContainerImageRunsVersion builds deploy/agones/Containerfile from
// static binaries (CGO_ENABLED=0) and runs host --version in the image:
// it must print what the binary prints outside it, so the image holds a
// host that starts with no base image at all.
func TestContainerImageRunsVersion(t *testing.T) {
	if testing.Short() {
		t.Skip("builds an image")
	}
	tool := containerTool()
	if tool == "" {
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
	image := "lockhost-test:" + strconv.FormatInt(time.Now().UnixNano(), 36)
	if out, err := exec.Command(tool, "build", "-f", "../../deploy/agones/Containerfile", "-t", image, ctxDir).CombinedOutput(); err != nil {
		t.Fatalf("%s build: %v\n%s", tool, err, out)
	}
	t.Cleanup(func() { _ = exec.Command(tool, "rmi", "-f", image).Run() })
	got, err := exec.Command(tool, "run", "--rm", image, "--version").Output()
	if err != nil {
		t.Fatalf("%s run %s --version: %v", tool, image, err)
	}
	if strings.TrimSpace(string(got)) != strings.TrimSpace(string(want)) {
		t.Fatalf("the image's host --version = %q, want %q", got, want)
	}
}
