// Package web serves a host's status over HTTP: a live status page, the
// session's state as JSON and as a stream of Server-Sent Events, the
// Prometheus metrics, and a health check.
//
// Handler builds the routes over any Source of host.Overview (the
// *host.Server); ListenAddr applies the address rule of the --http flag
// (a bare port binds loopback only); Listen and Serve run an http.Server
// that stops, live streams included, when its context ends.
//
// Routes:
//
//	/              the status page: one self-contained HTML page that
//	               updates itself from /events, with no external resources
//	/api/overview  the session's state as JSON (durations in milliseconds)
//	/events        the same JSON about twice a second, as Server-Sent Events
//	/api/samples   the session's recent samples as JSON, for the page's
//	               charts of the tick rate, bytes sent and players' latency
//	               (when the Source is a Sampler, as *host.Server is)
//	/maps/ID.png   a picture of map ID drawn from the host's own state, at
//	               most every PictureEvery per map (when the Source is a
//	               Painter and the game draws; a relay host draws none)
//	/metrics       Prometheus text format (when Config.Gatherer is set)
//	/healthz       200 "ok" while the session goroutine publishes its state,
//	               503 when it has not yet or has stalled
//	/play          the browser player (when Config.Play is set; package
//	               operator/play)
//	/ws            players over WebSocket (when Config.Players is set;
//	               package transport/ws)
//
// With Config.Token set, every route but /healthz and /ws asks for the
// token (a player on /ws is admitted by the game, by its password):
// "Authorization: Bearer TOKEN" from a scraper, or basic authentication
// with the token as the password from a browser's prompt. Without it the
// routes are open, which is why a bare port binds loopback only.
//
// The page and the JSON show what players send (names) only as text: the
// page never parses data as HTML, and its Content-Security-Policy allows
// only its own inline script and style.
package web
