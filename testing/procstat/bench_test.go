package procstat

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestMs(t *testing.T) {
	for _, tc := range []struct {
		d    time.Duration
		want float64
	}{
		{0, 0},
		{1500 * time.Microsecond, 1.5},
		{2*time.Second + 999, 2000}, // below a microsecond is dropped
		{-3 * time.Millisecond, -3},
	} {
		if got := Ms(tc.d); got != tc.want {
			t.Errorf("Ms(%v) = %v, want %v", tc.d, got, tc.want)
		}
	}
}

func TestPercentile(t *testing.T) {
	if got := Percentile([]time.Duration(nil), 0.99); got != 0 {
		t.Errorf("empty: %v, want 0", got)
	}
	v := make([]int, 100)
	for i := range v {
		v[i] = i + 1
	}
	for _, tc := range []struct {
		p    float64
		want int
	}{{0, 1}, {0.5, 51}, {0.99, 100}, {1, 100}} {
		if got := Percentile(v, tc.p); got != tc.want {
			t.Errorf("p%v of 1..100 = %d, want %d", tc.p, got, tc.want)
		}
	}
	if got := Percentile([]float64{7}, 1); got != 7 {
		t.Errorf("p100 of one = %v, want 7", got)
	}
}

func TestMedian(t *testing.T) {
	v := []float64{5, 1, 4, 2, 3, 6}
	if got := Median(v); got != 4 {
		t.Errorf("median of %v = %v, want 4 (the upper middle)", v, got)
	}
	if !slices.Equal(v, []float64{5, 1, 4, 2, 3, 6}) {
		t.Errorf("Median changed its argument: %v", v)
	}
	if got := Median([]int{9, 3, 6}); got != 6 {
		t.Errorf("median of 9 3 6 = %d, want 6", got)
	}
	if got := Median([]int(nil)); got != 0 {
		t.Errorf("median of nothing = %d, want 0", got)
	}
}

func TestBuildTool(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go build")
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	mod := t.TempDir()
	write := func(name, text string) {
		t.Helper()
		p := filepath.Join(mod, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module example.com/tools\n\ngo 1.22\n")
	write("cmd/hello/main.go", "package main\n\nfunc main() { println(\"hello\") }\n")
	write("cmd/broken/main.go", "package main\n\nfunc main() { undefinedName() }\n")
	t.Chdir(mod)
	out := t.TempDir()

	bin, err := BuildTool(out, "./cmd/hello")
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(out, "hello"); bin != want {
		t.Errorf("binary at %s, want %s", bin, want)
	}
	if said, err := exec.Command(bin).CombinedOutput(); err != nil || string(said) != "hello\n" {
		t.Errorf("the binary said %q, %v", said, err)
	}

	_, err = BuildTool(out, "./cmd/broken")
	if err == nil || !strings.HasPrefix(err.Error(), "build ./cmd/broken: ") || !strings.Contains(err.Error(), "undefinedName") {
		t.Errorf("a package that does not compile: %v", err)
	}

	bins := BuildTools(t, "./cmd/hello", "./cmd/hello")
	if len(bins) != 2 || filepath.Base(bins[0]) != "hello" || bins[0] != bins[1] {
		t.Errorf("BuildTools gave %q, want the same hello binary twice", bins)
	}
	if said, err := exec.Command(bins[0]).CombinedOutput(); err != nil || string(said) != "hello\n" {
		t.Errorf("BuildTools's binary said %q, %v", said, err)
	}
}
