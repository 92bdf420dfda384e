// Package agones makes a host an Agones game server. It speaks the REST
// gateway of the Agones SDK server (the sidecar beside the host in its
// pod, or the SDK server in local mode) with net/http: Client marks the
// GameServer Ready, Allocated or Shutdown, pings Health, sets labels and
// annotations, reads the GameServer and keeps the "players" List.
//
// Agent drives a Client from the outside of a host: it reads
// host.Server.Overview, pings Health while the session goroutine keeps
// refreshing it (a stalled session stops the pings, so Agones marks the
// server Unhealthy and replaces it), keeps the players List equal to the
// players online, and shuts the host down once it has been empty for the
// idle time after its last player left.
//
// A relay host (host serve --relay) is Ready as soon as it serves, before
// it has a world: its arbiter finds it only through an allocation, which
// takes a fresh session from the Ready GameServers, so waiting for the
// arbiter's world would leave the session with no way to get one. The arbiter then
// counts as a player: its join allocates the GameServer (if the
// allocation has not already), its name is in the players List beside the
// players', and the idle time runs once all of them have left.
//
// The sidecar's port is in AGONES_SDK_HTTP_PORT (PortEnv); the REST paths
// are Agones' documented ones: /ready, /health, /allocate, /shutdown,
// /gameserver, /metadata/label, /metadata/annotation and, for Lists,
// /v1beta1/lists/{name} with :addValue and :removeValue.
package agones
