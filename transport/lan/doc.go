// Package lan finds hosts on the local network without typing an address.
// A joiner sends a probe datagram to the discovery port (Port) by IPv4
// broadcast, IPv4 multicast (Group4) and IPv6 multicast (Group6) on each
// interface; every host listening there answers with its game port and a
// UDP status reply (package status), so the joiner learns each host's
// address, name, game, players, password, TLS and content digest from one
// round trip.
//
// A reply is never larger than the probe that asked for it (ProbeSize
// bytes, padded), so a spoofed probe cannot turn a host into an amplifier,
// and a Responder answers at a bounded rate per source address and in all.
//
// Discover is the joiner's side; Listen opens the host's sockets and
// Responder answers on them. Tests pass an explicit loopback interface:
// no probe of theirs leaves the machine.
package lan
