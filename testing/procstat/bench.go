package procstat

// Small helpers the benchmarks in scripts/ share besides the /proc
// readers: durations in milliseconds, percentiles of sorted samples, and
// building a command of this module to run as its own process.

import (
	"cmp"
	"fmt"
	"net"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// Ms is d in milliseconds, to the microsecond.
func Ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// Percentile is the element at fraction p (0 to 1) of sorted, which is in
// ascending order: the one at index p*len(sorted), the last for p = 1. It
// is the zero value when sorted is empty.
func Percentile[T any](sorted []T, p float64) T {
	if len(sorted) == 0 {
		var zero T
		return zero
	}
	return sorted[min(len(sorted)-1, int(p*float64(len(sorted))))]
}

// Median is the middle element of v in order (the upper of the two middle
// ones for an even count), or the zero value when v is empty. It sorts a
// copy and leaves v as it is.
func Median[T cmp.Ordered](v []T) T {
	s := slices.Clone(v)
	slices.Sort(s)
	return Percentile(s, 0.5)
}

// BuildTool builds the command package pkg (such as "./cmd/host",
// relative to the working directory, or a full import path, as the tests
// that run the real tools give) with go build into dir, and returns the
// binary's path: dir joined with the package's last element.
func BuildTool(dir, pkg string) (string, error) {
	bin := filepath.Join(dir, path.Base(pkg))
	if out, err := exec.Command("go", "build", "-o", bin, pkg).CombinedOutput(); err != nil {
		return "", fmt.Errorf("build %s: %w\n%s", pkg, err, out)
	}
	return bin, nil
}

// BuildHostAndJoin builds the two command-line tools, cmd/host and
// cmd/join, into dir (as BuildTool does), for a benchmark that runs both.
func BuildHostAndJoin(dir string) (hostBin, joinBin string, err error) {
	return HostAndJoin(dir, "")
}

// HostAndJoin is BuildHostAndJoin for a benchmark that may measure
// another build of the host (its -host-bin): hostBin, when not empty, is
// returned as it is and only cmd/join is built.
func HostAndJoin(dir, hostBin string) (string, string, error) {
	var err error
	if hostBin == "" {
		if hostBin, err = BuildTool(dir, "github.com/lockhost/lockhost/cmd/host"); err != nil {
			return "", "", err
		}
	}
	joinBin, err := BuildTool(dir, "github.com/lockhost/lockhost/cmd/join")
	if err != nil {
		return "", "", err
	}
	return hostBin, joinBin, nil
}

// BuildTools builds each command package of pkgs (as for BuildTool) into
// a temporary folder of t's and returns the binaries' paths in the same
// order; a failed build fails the test.
func BuildTools(t testing.TB, pkgs ...string) []string {
	t.Helper()
	dir := t.TempDir()
	bins := make([]string, 0, len(pkgs))
	for _, pkg := range pkgs {
		bin, err := BuildTool(dir, pkg)
		if err != nil {
			t.Fatal(err)
		}
		bins = append(bins, bin)
	}
	return bins
}

// MustFreeAddr is a loopback TCP address free just now (a port listened
// on and closed again), for a benchmark to give a tool it starts. It
// panics if none can be had: a benchmark cannot run without one.
func MustFreeAddr() string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}
