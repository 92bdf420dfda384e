// Package addrkey says which remote addresses count as one for per-address
// limits: an IPv4 address by itself, an IPv6 address by its /64 prefix,
// since one machine or home is usually given a whole /64 and could
// otherwise pick a fresh address for every connection; and which count as
// one network for per-network shares (Prefix: an IPv4 /24, an IPv6 /64).
package addrkey

import "net"

// Of returns the key for the IP address ip (text, without a port); text
// that is not an IP address is its own key.
func Of(ip string) string {
	a := net.ParseIP(ip)
	if a == nil {
		return ip
	}
	if v4 := a.To4(); v4 != nil {
		return v4.String()
	}
	mask := net.CIDRMask(64, 128)
	return (&net.IPNet{IP: a.Mask(mask), Mask: mask}).String()
}

// OfHostPort is Of for "host:port" (a net.Conn's or an HTTP request's
// remote address).
func OfHostPort(addr string) string {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return Of(addr)
	}
	return Of(host)
}

// Prefix returns the key of the network ip (text, without a port) is
// counted in for per-network shares: an IPv4 address's /24, an IPv6
// address's /64 (the same as Of). Text that is not an IP address is its
// own key.
func Prefix(ip string) string {
	a := net.ParseIP(ip)
	if a == nil {
		return ip
	}
	if v4 := a.To4(); v4 != nil {
		mask := net.CIDRMask(24, 32)
		return (&net.IPNet{IP: v4.Mask(mask), Mask: mask}).String()
	}
	return Of(ip)
}
