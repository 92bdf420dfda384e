package lan

import (
	"syscall"
)

// reuseControl does nothing on Windows, where sharing a port lets another
// program take it over: one host per machine answers discovery.
func reuseControl(network, address string, c syscall.RawConn) error { return nil }

func join4(fd uintptr, group, ifAddr [4]byte) error {
	return syscall.SetsockoptIPMreq(syscall.Handle(fd), syscall.IPPROTO_IP, syscall.IP_ADD_MEMBERSHIP,
		&syscall.IPMreq{Multiaddr: group, Interface: ifAddr})
}

func join6(fd uintptr, group [16]byte, ifIndex int) error {
	return syscall.SetsockoptIPv6Mreq(syscall.Handle(fd), syscall.IPPROTO_IPV6, syscall.IPV6_JOIN_GROUP,
		&syscall.IPv6Mreq{Multiaddr: group, Interface: uint32(ifIndex)})
}

func multicastIf4(fd uintptr, ifAddr [4]byte) error {
	return syscall.SetsockoptInet4Addr(syscall.Handle(fd), syscall.IPPROTO_IP, syscall.IP_MULTICAST_IF, ifAddr)
}
