//go:build unix

package lan

import (
	"syscall"
)

func reuseControl(network, address string, c syscall.RawConn) error {
	var serr error
	err := c.Control(func(fd uintptr) {
		serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_REUSEADDR, 1)
		if serr == nil {
			serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, reusePort(), 1)
		}
	})
	if err != nil {
		return err
	}
	return serr
}

func join4(fd uintptr, group, ifAddr [4]byte) error {
	return syscall.SetsockoptIPMreq(int(fd), syscall.IPPROTO_IP, syscall.IP_ADD_MEMBERSHIP,
		&syscall.IPMreq{Multiaddr: group, Interface: ifAddr})
}

func join6(fd uintptr, group [16]byte, ifIndex int) error {
	return syscall.SetsockoptIPv6Mreq(int(fd), syscall.IPPROTO_IPV6, syscall.IPV6_JOIN_GROUP,
		&syscall.IPv6Mreq{Multiaddr: group, Interface: uint32(ifIndex)})
}

func multicastIf4(fd uintptr, ifAddr [4]byte) error {
	return syscall.SetsockoptInet4Addr(int(fd), syscall.IPPROTO_IP, syscall.IP_MULTICAST_IF, ifAddr)
}
