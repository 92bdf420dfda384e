// Package metrics exposes a host's work to Prometheus.
//
// A Host hears about joins, desyncs and saves as they happen (it is a
// host.Observer, set as host.Config.Observer) and counts them; when
// registered with a source of host.Overview (the *host.Server), it also
// reports the session's state and the host's counters, read at scrape time
// with no goroutine of its own. Every metric is named lockhost_*.
//
// Wiring, in order (the observer must exist before the server, the server
// before the registry):
//
//	m := metrics.New()
//	cfg.Observer = m
//	srv, err := host.New(cfg, content, world)
//	reg, err := metrics.NewRegistry(m, srv) // plus Go runtime and process metrics
//
// Per-player series (ticks behind, latency) are labelled with the player's
// name: a username is at most 15 characters of A-Z a-z 0-9 _, the players
// online are capped by the host (a few dozen at most), and a player who
// leaves drops out of the next scrape, so the label set stays bounded.
package metrics
