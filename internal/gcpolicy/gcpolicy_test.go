package gcpolicy

import (
	"os"
	"runtime/debug"
	"testing"
)

func TestApply(t *testing.T) {
	old := debug.SetGCPercent(100)
	defer debug.SetGCPercent(old)
	t.Setenv("GOGC", "")
	Apply()
	ApplyHost()
	if got := debug.SetGCPercent(100); got != 100 {
		t.Fatalf("GOGC set in the environment: percent %d, want it left at 100", got)
	}
}

func TestApplyWithoutEnv(t *testing.T) {
	old := debug.SetGCPercent(100)
	defer debug.SetGCPercent(old)
	t.Setenv("GOGC", "") // restored after the test
	if err := unsetenv("GOGC"); err != nil {
		t.Fatal(err)
	}
	Apply()
	if got := debug.SetGCPercent(100); got != Percent {
		t.Fatalf("percent %d, want %d", got, Percent)
	}
	ApplyHost()
	if got := debug.SetGCPercent(100); got != HostPercent {
		t.Fatalf("host: percent %d, want %d", got, HostPercent)
	}
}

var unsetenv = os.Unsetenv
