//go:build !linux

package hugeheap

// Prepare does nothing on this system and reports false.
func Prepare(n uint64) bool { return false }
