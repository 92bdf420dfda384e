// Package ws carries the protocol over WebSocket, on both sides.
//
// The byte stream of the protocol (docs/protocol.md, section 2) travels as
// the concatenation of binary WebSocket messages: a writer may split it
// anywhere, a frame may span messages or share one, and a text message
// ends the connection. Everything above the byte stream (handshake,
// limits, deadlines, admission, TLS if the host speaks it) is the same as
// over TCP.
//
// The host's side is a Listener: an http.Handler for the path /ws that
// upgrades each request and hands the connection, as a net.Conn whose
// RemoteAddr is the HTTP client's address, to whoever serves the Listener
// (host.Listeners.Extra); it answers 503 (Retry-After) beyond its backlog
// or an address's or network's share of it, and keeps a part of it for
// networks that have nothing waiting. The joining side is Dial, a
// join.Config.Dial; it builds for GOOS=js GOARCH=wasm too, where the
// browser's WebSocket carries it. Elsewhere an answer other than the
// upgrade is a StatusError, and DialRetry asks a busy host again after
// its Retry-After.
package ws
