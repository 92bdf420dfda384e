package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// smallConfig is a quick run for the in-process tests (they run under
// -race in CI, which slows the simulation several times).
func smallConfig() config {
	return config{Ticks: 1500, Every: 250, Seed: 1, Maps: 2, Side: 120}
}

func runString(t *testing.T, cfg config) string {
	t.Helper()
	var b bytes.Buffer
	if err := run(cfg, &b); err != nil {
		t.Fatalf("run(%+v): %v", cfg, err)
	}
	return b.String()
}

// checkpoints returns the tick= lines of an output.
func checkpoints(out string) []string {
	var cps []string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "tick=") {
			cps = append(cps, l)
		}
	}
	return cps
}

func TestOutputShape(t *testing.T) {
	cfg := smallConfig()
	cfg.Ticks = 600 // not a multiple of Every: the last checkpoint is at 600
	out := runString(t, cfg)
	cps := checkpoints(out)
	var ticks []string
	for _, c := range cps {
		ticks = append(ticks, strings.Fields(c)[0])
		if n := len(strings.Fields(c)); n != 2+cfg.Maps {
			t.Errorf("checkpoint %q has %d fields, want %d", c, n, 2+cfg.Maps)
		}
	}
	if got, want := strings.Join(ticks, " "), "tick=0 tick=250 tick=500 tick=600"; got != want {
		t.Errorf("checkpoints at %s, want %s", got, want)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	last := lines[len(lines)-1]
	if !strings.HasPrefix(last, "commands=") || strings.Contains(last, "applied=0 ") || strings.Contains(last, "refused=0 ") {
		t.Errorf("summary %q: want some applied and some refused commands", last)
	}
}

// TestSameTwice catches nondeterminism within one architecture (map
// iteration order, pointer-dependent behaviour, shared state between
// worlds).
func TestSameTwice(t *testing.T) {
	cfg := smallConfig()
	a, b := runString(t, cfg), runString(t, cfg)
	if a != b {
		t.Fatalf("two runs of the same config differ:\n%s\n---\n%s", a, b)
	}
}

// TestSeedMatters checks that the hashes depend on the seed at every
// checkpoint, so matching outputs mean something.
func TestSeedMatters(t *testing.T) {
	cfg := smallConfig()
	a := checkpoints(runString(t, cfg))
	cfg.Seed = 2
	b := checkpoints(runString(t, cfg))
	if len(a) != len(b) || len(a) == 0 {
		t.Fatalf("checkpoint counts %d and %d", len(a), len(b))
	}
	for i := range a {
		fa, fb := strings.Fields(a[i]), strings.Fields(b[i])
		for j := 1; j < len(fa); j++ { // field 0 is the tick
			if fa[j] == fb[j] {
				t.Errorf("seeds 1 and 2 give the same %s", fa[j])
			}
		}
	}
}

// TestReplay checks that replaying a logged run reproduces it. A replay
// never calls World.Pawns or World.Passable, so this also checks that the
// generator's reads leave the simulation alone.
func TestReplay(t *testing.T) {
	cfg := smallConfig()
	cfg.Log = filepath.Join(t.TempDir(), "cmds.log")
	generated := runString(t, cfg)
	data, err := os.ReadFile(cfg.Log)
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(data, []byte("\n")); n < 100 {
		t.Fatalf("command log has %d lines, want a few hundred", n)
	}
	replayCfg := cfg
	replayCfg.Log, replayCfg.Replay = "", cfg.Log
	if replayed := runString(t, replayCfg); replayed != generated {
		t.Fatalf("replay differs from the logged run:\n%s\n---\n%s", generated, replayed)
	}

	// A log for another world is refused.
	other := replayCfg
	other.Seed = 7
	if err := run(other, new(bytes.Buffer)); err == nil || !strings.Contains(err.Error(), "seed=1") {
		t.Errorf("replay with another seed: err = %v, want a header mismatch", err)
	}
	// Out-of-order and malformed logs are refused.
	header := strings.SplitN(string(data), "\n", 2)[0] + "\n"
	for name, body := range map[string]string{
		"order":   "5 0 1 -\n3 0 1 -\n",
		"fields":  "5 0 1\n",
		"payload": "5 0 1 zz\n",
	} {
		p := filepath.Join(t.TempDir(), name+".log")
		if err := os.WriteFile(p, []byte(header+body), 0o644); err != nil {
			t.Fatal(err)
		}
		bad := replayCfg
		bad.Replay = p
		if err := run(bad, new(bytes.Buffer)); err == nil {
			t.Errorf("%s: replay of a bad log succeeded", name)
		}
	}
}

// TestCrossArch builds the program for 386 and for the host and requires
// identical output: 386 has 32-bit ints and pointers and different code
// generation, so integer-width and overflow slips show up here. The built
// binaries are not race-instrumented, so this stays quick under -race.
func TestCrossArch(t *testing.T) {
	if testing.Short() {
		t.Skip("builds two binaries; skipped with -short")
	}
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go is not on PATH")
	}
	if runtime.GOARCH != "amd64" || (runtime.GOOS != "linux" && runtime.GOOS != "windows" && runtime.GOOS != "freebsd") {
		t.Skipf("386 binaries do not run natively on %s/%s", runtime.GOOS, runtime.GOARCH)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	dir := t.TempDir()
	exe := ""
	if runtime.GOOS == "windows" {
		exe = ".exe"
	}
	archs := []string{runtime.GOARCH, "386"}
	bins := make([]string, len(archs))
	errs := make(chan error, len(archs))
	for i, arch := range archs {
		bins[i] = filepath.Join(dir, "detcheck-"+arch+exe)
		go func() {
			cmd := exec.CommandContext(ctx, gobin, "build", "-o", bins[i], ".")
			cmd.Env = append(os.Environ(), "GOARCH="+arch, "GOOS="+runtime.GOOS, "CGO_ENABLED=0")
			if out, err := cmd.CombinedOutput(); err != nil {
				errs <- fmt.Errorf("go build for %s: %w\n%s", arch, err, out)
				return
			}
			errs <- nil
		}()
	}
	for range archs {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}

	args := []string{"-ticks", "2000", "-every", "250"}
	outs := make([]string, len(archs))
	for i, arch := range archs {
		start := time.Now()
		var stderr bytes.Buffer
		cmd := exec.CommandContext(ctx, bins[i], args...)
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if errors.Is(err, syscall.ENOEXEC) {
			// A kernel built without 32-bit support cannot run the 386
			// binary at all: nothing to compare on this machine.
			t.Skipf("%s: this kernel cannot run %s binaries (%v); the cross-architecture check needs one that can", arch, arch, err)
		}
		if err != nil {
			t.Fatalf("%s: %v\n%s", arch, err, stderr.Bytes())
		}
		outs[i] = string(out)
		t.Logf("%s: %v", arch, time.Since(start).Round(time.Millisecond))
	}
	if n := len(checkpoints(outs[0])); n != 9 {
		t.Fatalf("%s printed %d checkpoints, want 9:\n%s", archs[0], n, outs[0])
	}
	if outs[0] != outs[1] {
		t.Fatalf("%s and 386 disagree:\n--- %s\n%s--- 386\n%s", archs[0], archs[0], outs[0], outs[1])
	}
	t.Logf("%s and 386 agree:\n%s", archs[0], outs[0])
}
