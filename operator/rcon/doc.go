// Package rcon serves the Source RCON protocol, the remote console that
// most game servers speak and that ready clients exist for everywhere.
//
// # Packets
//
// Every packet, both ways, is a little-endian int32 size (the bytes that
// follow it), an int32 request ID, an int32 type, the body and two NUL
// bytes (the body's terminator and an empty string). A client packet is
// at most MaxPacket bytes in all, size field included, and at least 14
// (size 10); anything else ends the connection before a byte of its body
// is allocated. Types: 3 SERVERDATA_AUTH and 2 SERVERDATA_EXECCOMMAND from
// the client, 2 SERVERDATA_AUTH_RESPONSE and 0 SERVERDATA_RESPONSE_VALUE
// from the server.
//
// # A connection
//
// The first packet must be SERVERDATA_AUTH with the password. The server
// answers with SERVERDATA_AUTH_RESPONSE carrying the request's ID, or -1
// for a wrong password, after which the connection is closed. The Source
// dedicated server sends an empty SERVERDATA_RESPONSE_VALUE before it;
// this server does not, as Minecraft's does not: Source clients wait for
// the SERVERDATA_AUTH_RESPONSE whatever comes first, while some
// Minecraft-style clients (Debian's rconclt among them) read the auth
// answer as the first packet and hang on the empty one.
//
// Failed attempts are limited per address (an IPv6 address by its /64);
// past the limit every attempt is refused without checking the password,
// while a right password costs nothing, so a script that connects for
// every command is not locked out. A command before authentication gets
// SERVERDATA_AUTH_RESPONSE -1 and the connection is closed.
//
// Each SERVERDATA_EXECCOMMAND runs one admin command line; its output
// comes back in SERVERDATA_RESPONSE_VALUE packets with the request's ID,
// each body at most MaxResponseBody bytes: every packet but the last is
// full, so a client that sees a full body knows more may follow (the
// Minecraft-style clients' rule), and an empty output is one empty
// packet. Requests are answered in the order they arrive.
//
// The Source clients' end-of-response trick is honoured: a client may
// follow a command with an empty SERVERDATA_RESPONSE_VALUE of another ID;
// the server mirrors it back (an empty SERVERDATA_RESPONSE_VALUE with that
// ID) after the command's output, followed, as the Source dedicated
// server does, by a SERVERDATA_RESPONSE_VALUE of the same ID whose body
// is the four bytes 00 01 00 00. The client reads until the mirror, and
// knows the output before it is complete. A client that detects a split
// by sending an empty command instead gets an empty response to it.
package rcon
