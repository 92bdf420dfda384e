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
	for _, tc := range []struct {
		name  string
		apply func()
		want  int
	}{
		{"default", Apply, Percent},
		{"host", ApplyHost, HostPercent},
		{"join", ApplyJoin, JoinPercent},
	} {
		t.Run(tc.name, func(t *testing.T) {
			old := debug.SetGCPercent(100)
			defer debug.SetGCPercent(old)
			t.Setenv("GOGC", "") // restored after the test
			if err := unsetenv("GOGC"); err != nil {
				t.Fatal(err)
			}
			tc.apply()
			if got := debug.SetGCPercent(100); got != tc.want {
				t.Fatalf("percent %d, want %d", got, tc.want)
			}
		})
	}
}

func TestApplyJoinLeavesEnv(t *testing.T) {
	old := debug.SetGCPercent(100)
	defer debug.SetGCPercent(old)
	t.Setenv("GOGC", "")
	ApplyJoin()
	ApplyHost()
	if got := debug.SetGCPercent(100); got != 100 {
		t.Fatalf("GOGC set in the environment: percent %d, want it left at 100", got)
	}
}

var unsetenv = os.Unsetenv
