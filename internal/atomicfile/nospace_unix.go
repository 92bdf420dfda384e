//go:build unix

package atomicfile

import "syscall"

// noSpaceUnix: no space left on the device, or the user's disk quota is
// exhausted.
var noSpaceUnix = []syscall.Errno{syscall.ENOSPC, syscall.EDQUOT}
