// Command genwasm builds the browser player for go generate in
// operator/play: it compiles ./wasm for GOOS=js GOARCH=wasm, reproducibly
// (-trimpath, -buildvcs=false, -ldflags=-s -w), gzips it at a fixed level
// with no name or time in the header into static/lockhost.wasm.gz, and
// copies Go's wasm_exec.js, license header and all, into static/. Both
// come from the Go release go.mod's go line names (GOTOOLCHAIN, fetched
// by the go command if it is not the one installed), so the same source
// gives the same bytes whatever Go runs the generator, which CI checks.
package main

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "genwasm:", err)
		os.Exit(1)
	}
}

func run() error {
	toolchain, err := pinnedToolchain()
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "genwasm")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	out := filepath.Join(tmp, "lockhost.wasm")
	build := exec.Command("go", "build", "-trimpath", "-buildvcs=false", "-ldflags=-s -w", "-o", out, "./wasm")
	build.Env = append(os.Environ(), "GOOS=js", "GOARCH=wasm", "CGO_ENABLED=0", "GOTOOLCHAIN="+toolchain)
	build.Stdout, build.Stderr = os.Stdout, os.Stderr
	if err := build.Run(); err != nil {
		return fmt.Errorf("build the player: %w", err)
	}
	raw, err := os.ReadFile(out)
	if err != nil {
		return err
	}
	gz, err := compress(raw)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join("static", "lockhost.wasm.gz"), gz, 0o644); err != nil {
		return err
	}
	return copyWasmExec(toolchain)
}

// pinnedToolchain is the Go release go.mod's go line names, as a
// GOTOOLCHAIN value (go1.26.8).
func pinnedToolchain() (string, error) {
	gomod, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	b, err := os.ReadFile(strings.TrimSpace(string(gomod)))
	if err != nil {
		return "", fmt.Errorf("read go.mod: %w", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "go "); ok && strings.Count(v, ".") == 2 {
			return "go" + strings.TrimSpace(v), nil
		}
	}
	return "", errors.New("go.mod names no Go release (go 1.N.M)")
}

// compress gzips b at the best level; the header has no name, no time
// and the OS byte Go always writes, so the output depends on b alone.
func compress(b []byte) ([]byte, error) {
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return nil, err
	}
	if _, err := zw.Write(b); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// copyWasmExec copies the Go toolchain's wasm_exec.js, which must match
// the compiler that built the player.
func copyWasmExec(toolchain string) error {
	env := exec.Command("go", "env", "GOROOT")
	env.Env = append(os.Environ(), "GOTOOLCHAIN="+toolchain)
	goroot, err := env.Output()
	if err != nil {
		return fmt.Errorf("go env GOROOT: %w", err)
	}
	src := filepath.Join(strings.TrimSpace(string(goroot)), "lib", "wasm", "wasm_exec.js")
	b, err := os.ReadFile(src)
	if err != nil {
		return fmt.Errorf("read wasm_exec.js from the Go toolchain: %w", err)
	}
	return os.WriteFile(filepath.Join("static", "wasm_exec.js"), b, 0o644)
}
