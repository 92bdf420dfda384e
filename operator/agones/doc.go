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
// The sidecar's port is in AGONES_SDK_HTTP_PORT (PortEnv); the REST paths
// are Agones' documented ones: /ready, /health, /allocate, /shutdown,
// /gameserver, /metadata/label, /metadata/annotation and, for Lists,
// /v1beta1/lists/{name} with :addValue and :removeValue.
package agones
