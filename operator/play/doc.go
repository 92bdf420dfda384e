// Package play serves the browser player at /play on the host's --http
// listener: a small page (static/index.html, play.js, play.css) that
// loads the joining side compiled to WebAssembly (the join library and
// the colony, package ./wasm) and joins the session over WebSocket at
// /ws, as any other client, then draws every map live from its own
// lockstep copy. On a host that shares its mods (GET /content/manifest
// on the same listener), the page fetches the files it lacks by hash into
// the browser's Cache Storage and loads them before it joins; a second
// visit fetches nothing. Or it plays back a recording of the host's.
//
// A coordinator (`host coordinator`) serves the same page at its invite
// links, /+CODE: there the page reaches the host registered as CODE
// through the coordinator instead of /ws: a lookup, a signalling
// attempt (docs/protocol.md section 18.5), and the browser's own
// RTCPeerConnection with the TURN servers the lookup gives and one
// negotiated data channel (label and protocol lockhost, id 0, ordered,
// reliable), which carries the byte stream of section 2 unchanged; so a
// friend plays from a link even when the host's own HTTP is out of
// reach. Joined so, the page uses its built-in content (the host's
// content manifest is on the host's HTTP).
//
// The WebAssembly binary is built by go generate (./internal/genwasm:
// reproducibly, gzipped) and embedded with Go's wasm_exec.js, so a host
// built from the repository serves it with nothing but Go. CI regenerates
// it and fails when the bytes differ, so the embedded client never lags
// the join code.
//
// Routes (under Handler):
//
//	/play                 the page: ?name=NAME joins at once (a form asks
//	                      otherwise), &spectate=1 watches, &bot=RATE sends
//	                      random commands, &debug=1 offers lockhost.corrupt
//	/play/play.js         the page's script
//	/play/play.css        its style
//	/play/wasm_exec.js    Go's WebAssembly glue
//	/play?replay=NAME     watches the recording NAME (package replay):
//	                      fetched, replayed from its start save with every
//	                      checkpoint checked, drawn, with play, pause and
//	                      speed; /play?replay lists the recordings
//	/play/replays         the recordings of Config.Replays as JSON
//	/play/replays/NAME    one of them (ValidReplayName; through an
//	                      os.Root of the folder; HEAD and ranges served by
//	                      http.ServeContent)
//	/play/lockhost.wasm   the player, gzipped (Content-Encoding: gzip, or
//	                      inflated for a client that does not take gzip:
//	                      inflated once and kept, HEAD and ranges served
//	                      by http.ServeContent)
package play

//go:generate go run ./internal/genwasm
