package coordserver

import (
	"time"

	"github.com/lockhost/lockhost/transport/coord"
)

// turnFor is the TURN server list with credentials for id, valid ttl from
// now, or nil when no TURN server is configured.
func turnFor(cfg *ServerConfig, id string, now time.Time) *coord.TURN {
	if len(cfg.TURNURLs) == 0 || len(cfg.TURNSecret) == 0 {
		return nil
	}
	u, p := coord.TURNCredentials(cfg.TURNSecret, id, now.Add(cfg.TURNTTL))
	return &coord.TURN{URLs: cfg.TURNURLs, Username: u, Credential: p, TTL: int64(cfg.TURNTTL / time.Second)}
}
