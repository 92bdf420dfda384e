//go:build !unix

package atomicfile

import "syscall"

// noSpaceUnix is only used by the rules of Unix systems; elsewhere the
// table for the running OS names its own numbers.
var noSpaceUnix = []syscall.Errno{syscall.ENOSPC}
