// Package turnserver is a TURN relay (pion/turn) that runs inside the
// coordinator's process, for a single-binary deployment: it listens on UDP
// and TCP at one address and accepts the TURN REST credentials the
// coordinator hands out (username "EXPIRY:ID", password
// base64(HMAC-SHA1(secret, username))), so no separate TURN server is
// needed. coturn remains the server the lab and the tests of the relayed
// path run against; this one is the convenient option.
package turnserver
