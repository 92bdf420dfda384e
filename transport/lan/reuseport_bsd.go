//go:build unix && !linux

package lan

import "syscall"

func reusePort() int { return syscall.SO_REUSEADDR } // reuse is enough where SO_REUSEPORT is not in package syscall
