// Package status answers "is this server up and how full is it" without
// joining: a connectionless UDP query served on the same port number as
// the host's TCP listener (UDP and TCP ports are separate name spaces, so
// the host binds both, e.g. net.Listen("tcp", addr) and
// net.ListenPacket("udp", addr)).
//
// A client sends one request datagram carrying a random 32-bit ping ID;
// the server answers with one reply datagram carrying the same ID and an
// Info. Ping does this from the client side; Server answers on a
// net.PacketConn.
//
// # Wire format
//
// All integers are big-endian. A request is exactly RequestSize (128)
// bytes:
//
//	offset  size  field
//	     0     4  magic "LHPQ"
//	     4     1  version (1)
//	     5     4  pingID  uint32
//	     9   119  zero padding
//	   128        end
//
// A reply is between MinReplySize (44) and MaxReplySize (172) bytes:
//
//	offset  size  field
//	     0     4  magic "LHPR"
//	     4     1  version (1)
//	     5     4  pingID      uint32  (copied from the request)
//	     9     4  players     int32   (>= 0)
//	    13     4  maxPlayers  int32   (>= 0)
//	    17     4  protocol    uint32
//	    21     8  tick        uint64
//	    29     1  flags       bit 0: password required; bit 1: TLS required; bits 2-7 zero
//	    30     4  databases   int32   (>= 0, how many def databases)
//	    34     8  defsHash    uint64  (see DefsHash)
//	    42     1  n = len(gameName)     (<= 64)
//	    43     n  gameName              (UTF-8)
//	  43+n     1  m = len(gameVersion)  (<= 64)
//	  44+n     m  gameVersion           (UTF-8)
//	44+n+m        end: no trailing bytes
//
//	+------+---+--------+---------+------------+----------+------+-------+-----------+----------+---+------+---+---------+
//	| LHPR | 1 | pingID | players | maxPlayers | protocol | tick | flags | databases | defsHash | n | name | m | version |
//	|  4   | 1 |   4    |    4    |     4      |    4     |  8   |   1   |     4     |    8     | 1 | <=64 | 1 |  <=64   |
//	+------+---+--------+---------+------------+----------+------+-------+-----------+----------+---+------+---+---------+
//
// # Version 2: how the host is reached
//
// A request of ReachVersion (2) asks also how the host is reached from
// the internet: its reply is a version 1 reply with version byte 2 and a
// trailer (Info.Reach): the port mapping's state (1 byte), the length k
// of the external address (0, 4 or 16), the address and, when k is not
// 0, its port (2 bytes); at most MaxReachReplySize (192) bytes, still
// within MaxAmplification of the request. Hosts before version 2 drop
// such a request, so Ping sends a version 1 request beside it and takes
// the first reply to either.
//
// # Version 3: the players' paths
//
// A request of PathsVersion (3) asks also the way each player's
// connection came: its reply is a version 2 reply with version byte 3
// and a paths trailer (Info.Paths): k, the number of counts (0 to
// MaxPathCodes, 16), then k uint16 counts, the i-th the players whose
// path has code i (PathCode: 0 other, 1 lan, 2 direct, 3 punched, 4
// turn-udp, 5 turn-tcp, 6 turn-tls, 7 turn); the last count is never 0.
// At most MaxPathsReplySize (225) bytes, still within MaxAmplification
// of the request. Ping sends a version 3, a version 2 and a version 1
// request at once and takes the first reply to any.
//
// # Amplification and abuse
//
// The largest reply is 42 + 1 + 64 + 1 + 64 = 172 bytes, so a reply is
// never more than MaxAmplification (2) times the 128-byte request; the
// package fails to compile if that stops being true. The padding exists
// only to make requests as large as replies, so that the server is
// useless as a reflector.
//
// The server drops silently, without any reply and counting it in
// dropped, any datagram that is not exactly RequestSize bytes, whose magic
// or version is wrong, or whose padding is not all zero. Valid requests
// are then rate-limited per source IP address with a token bucket
// (Options.Rate replies per second, Options.Burst at once); requests over
// the limit are dropped silently too. The limiter tracks at most
// maxSources addresses; while it is full, requests from new addresses are
// dropped, which bounds memory under a flood from spoofed addresses.
//
// The client (DecodeReply, used by Ping) checks the magic, version, exact
// length, string lengths, UTF-8, non-negative counts and reserved flag
// bits, and refuses anything else. Ping sends from a connected socket, so
// it only sees datagrams from the address it pinged, and ignores replies
// that are malformed or carry another ping ID.
//
// # Content hash
//
// Info.DefsHash lets a client tell before joining whether its def
// databases match the host's: both sides compute DefsHash (SummaryHash
// for a []defs.Summary) over their databases' (type, count, hash)
// triples, in the same order (the order defs.Set.Summary returns, sorted
// by type).
package status
