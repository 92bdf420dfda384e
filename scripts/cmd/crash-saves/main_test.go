package main

import (
	"os/exec"
	"testing"
	"time"
)

// TestCrashSaves kills a saving host five times (the full run of 50 is
// scripts/crash-saves) and requires every save it left to validate.
func TestCrashSaves(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the host")
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	t.Chdir("../../..")
	if err := run(5, 100*time.Millisecond, 7); err != nil {
		t.Fatal(err)
	}
}
