package hugeheap

import (
	"bytes"
	"os"
	"runtime"
	"syscall"
	"unsafe"
)

// hugePage is the size of a transparent huge page on the platforms this
// file builds for.
const hugePage = 2 << 20

// Prepare makes about n bytes of the heap huge-page backed, if the
// system leaves that to the program, and reports whether it did. It caps
// n at half the machine's memory, so a size taken from a peer's claim
// cannot make the runtime ask for more than the kernel grants. It
// collects garbage once, so call it early, while the heap is small.
func Prepare(n uint64) bool {
	if unsafe.Sizeof(uintptr(0)) < 8 || thpMode() != "madvise" || strictOvercommit() {
		return false
	}
	var si syscall.Sysinfo_t
	if err := syscall.Sysinfo(&si); err != nil {
		return false
	}
	n = min(n, uint64(si.Totalram)*uint64(si.Unit)/2)
	if n < 2*hugePage {
		return false
	}
	// A fresh large allocation is not touched (the runtime knows memory
	// straight from the kernel is zero), so this costs address space,
	// not memory.
	b := make([]byte, n)
	p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	beg := (p + hugePage - 1) &^ (hugePage - 1)
	end := (p + uintptr(n)) &^ (hugePage - 1)
	err := syscall.Madvise(b[beg-p:end-p], syscall.MADV_HUGEPAGE)
	b = nil
	// Free the range now, so the allocations that follow get it rather
	// than memory beyond it.
	runtime.GC()
	return err == nil
}

// thpMode is the kernel's transparent huge page setting: "always",
// "madvise" or "never" ("" when unknown).
func thpMode() string {
	b, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled")
	if err != nil {
		return ""
	}
	_, after, ok := bytes.Cut(b, []byte("["))
	mode, _, ok2 := bytes.Cut(after, []byte("]"))
	if !ok || !ok2 {
		return ""
	}
	return string(mode)
}

// strictOvercommit tells whether the kernel refuses memory it cannot
// promise (vm.overcommit_memory 2): there, growing the heap ahead of use
// could fail, and the runtime would end the program.
func strictOvercommit() bool {
	b, err := os.ReadFile("/proc/sys/vm/overcommit_memory")
	return err != nil || bytes.HasPrefix(bytes.TrimSpace(b), []byte("2"))
}
