//go:build !unix && !windows

package lan

import (
	"errors"
	"syscall"
)

func reuseControl(network, address string, c syscall.RawConn) error { return nil }

func join4(fd uintptr, group, ifAddr [4]byte) error { return errors.ErrUnsupported }

func join6(fd uintptr, group [16]byte, ifIndex int) error { return errors.ErrUnsupported }

func multicastIf4(fd uintptr, ifAddr [4]byte) error { return errors.ErrUnsupported }
