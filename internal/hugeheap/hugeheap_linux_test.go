package hugeheap

import (
	"bufio"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unsafe"
)

// mapping is what /proc/self/smaps says of the mapping that holds an
// address: its huge pages in bytes, and its VmFlags ("hg": advised to use
// huge pages).
type mapping struct {
	hugeBytes uint64
	flags     []string
}

func mappingAt(t *testing.T, p uintptr) mapping {
	t.Helper()
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Skipf("no smaps: %v", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	in, found := false, false
	var m mapping
	for sc.Scan() {
		line := sc.Text()
		var lo, hi uintptr
		if n, _ := fmt.Sscanf(line, "%x-%x ", &lo, &hi); n == 2 {
			if found {
				break
			}
			in = lo <= p && p < hi
			found = in
			continue
		}
		if !in {
			continue
		}
		if v, ok := strings.CutPrefix(line, "AnonHugePages:"); ok {
			kb, err := strconv.ParseUint(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				t.Fatalf("smaps line %q: %v", line, err)
			}
			m.hugeBytes = kb << 10
		}
		if v, ok := strings.CutPrefix(line, "VmFlags:"); ok {
			m.flags = strings.Fields(v)
		}
	}
	if !found {
		t.Fatalf("no mapping holds %#x", p)
	}
	return m
}

// sink keeps the touched buffer alive until it is measured.
var sink []byte

// TestPreparedMemoryIsHugePages: memory allocated after Prepare and
// touched lies in huge pages, as the kernel counts them. (In "madvise"
// mode memory nobody advised gets none, so they come from Prepare.)
func TestPreparedMemoryIsHugePages(t *testing.T) {
	if mode := thpMode(); mode != "madvise" {
		t.Skipf("transparent huge pages are %q here, not left to programs", mode)
	}
	if strictOvercommit() {
		t.Skip("strict overcommit: Prepare does nothing")
	}
	const n = 64 << 20
	if !Prepare(2 * n) {
		t.Fatal("Prepare did nothing")
	}
	sink = make([]byte, n)
	for i := 0; i < n; i += 4096 {
		sink[i] = 1
	}
	// The middle: the range Prepare advised starts at a huge page
	// boundary, maybe after the allocation does.
	m := mappingAt(t, uintptr(unsafe.Pointer(unsafe.SliceData(sink)))+n/2)
	sink = nil
	if !slices.Contains(m.flags, "hg") {
		t.Fatalf("the allocation after Prepare lies in a mapping not advised to use huge pages (flags %v)", m.flags)
	}
	if m.hugeBytes < n/2 {
		t.Fatalf("%d MiB of %d MiB touched after Prepare in huge pages, want most", m.hugeBytes>>20, n>>20)
	}
}

// TestPrepareDeclinesSmall: less than two huge pages is not worth a
// garbage collection.
func TestPrepareDeclinesSmall(t *testing.T) {
	if Prepare(hugePage) {
		t.Fatal("Prepare of one huge page did something")
	}
}

func TestThpModeParses(t *testing.T) {
	switch m := thpMode(); m {
	case "", "always", "madvise", "never":
	default:
		t.Fatalf("mode %q", m)
	}
}
