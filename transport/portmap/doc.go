// Package portmap asks the home router in front of a host to forward the
// host's game port to it, so that a friend on the internet can join a host
// behind a NAT without anyone opening a port by hand.
//
// Two protocols are spoken, through maintained libraries: UPnP-IGD
// (versions 1 and 2: WANIPConnection:2, WANIPConnection:1 and
// WANPPPConnection:1) and NAT-PMP (RFC 6886). Find asks both at once and
// takes the router that answers first. PCP (RFC 6887), NAT-PMP's
// successor on the same UDP port 5351, is not spoken: a PCP router answers
// a NAT-PMP request with NAT-PMP (RFC 6887, appendix A), which covers it.
//
// A Mapper holds the mappings of one host: it asks for the game port over
// TCP and, when the host serves its UDP status query there too, over UDP;
// it renews them at half their lease, before they lapse, and removes them
// on Close. Status tells the external address a friend types and the
// mapping's state, for the log, the status page and the status query.
//
// The Router interface is all a Mapper needs of a router, so tests give it
// a fake one; the Mapper's timers come from a Clock, so tests drive its
// renewals by hand.
//
// Nothing here sends a packet until Find or a Mapper is called: SSDP
// multicast to the LAN and NAT-PMP datagrams to the default gateway. The
// caller decides when that is allowed (see Eligible).
package portmap
