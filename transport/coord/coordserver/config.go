package coordserver

import (
	"errors"
	"github.com/lockhost/lockhost/transport/coord"
	"log/slog"
	"net/http"
	"time"
)

// ServerConfig configures a coordinator. Its zero value works (no TURN
// server); withDefaults fills every unset field in one place. Rates are
// per second; a negative rate switches that limit off.
type ServerConfig struct {
	// Logger receives the coordinator's log (default: discarded).
	Logger *slog.Logger
	// TURNURLs are the TURN servers handed out (turn: or turns: URLs,
	// for example "turn:turn.example.org:3478?transport=udp"); none, no
	// TURN.
	TURNURLs []string
	// TURNSecret is the secret shared with the TURN server
	// (static-auth-secret in coturn).
	TURNSecret []byte
	// TURNTTL is how long TURN credentials stay valid (default 1 h).
	TURNTTL time.Duration
	// LookupRate and LookupBurst limit lookups, signalling attempts and
	// reports per source address (default 1 a second, bursts of 20); the
	// source's /24 (IPv4) or /64 (IPv6) gets four times as much.
	LookupRate  float64
	LookupBurst int
	// RegisterRate and RegisterBurst limit host registrations per source
	// address likewise (default one in 10 s, bursts of 5).
	RegisterRate  float64
	RegisterBurst int
	// MaxHosts bounds the hosts registered at once (default 10000).
	MaxHosts int
	// HostTimeout drops a host that has sent nothing for this long
	// (default 60 s; hosts ping every 20 s).
	HostTimeout time.Duration
	// AttemptTimeout bounds one signalling attempt (default 30 s).
	AttemptTimeout time.Duration
	// OwnersFile, if set, keeps which host's key holds each code across
	// restarts of the coordinator (JSON, written when a code is first
	// claimed). Without it the table lives in memory only.
	OwnersFile string
	// OwnerTTL frees a code whose host has not registered for this long
	// (default 30 days).
	OwnerTTL time.Duration
	// MaxOwners bounds the codes held (default ten times MaxHosts).
	MaxOwners int
	// MaxAttempts bounds the signalling attempts open to one host at once
	// (default 8).
	MaxAttempts int
	// Player, if set, is the browser player (operator/play's handler,
	// serving /play and its files): the coordinator serves it under /play
	// and, for an invite link /+CODE, its page, which reaches the host by
	// the code through this coordinator (WebRTC) even when the host's own
	// HTTP is out of reach. Without it the invite page links to the
	// host's own browser player.
	Player http.Handler
}

// withDefaults fills every unset field.
func (c ServerConfig) withDefaults() ServerConfig {
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	fill := func(d *time.Duration, v time.Duration) {
		if *d == 0 {
			*d = v
		}
	}
	fill(&c.TURNTTL, time.Hour)
	fill(&c.HostTimeout, time.Minute)
	fill(&c.AttemptTimeout, 30*time.Second)
	fill(&c.OwnerTTL, 30*24*time.Hour)
	if c.LookupRate == 0 {
		c.LookupRate = 1
	}
	if c.LookupBurst == 0 {
		c.LookupBurst = 20
	}
	if c.RegisterRate == 0 {
		c.RegisterRate = 0.1
	}
	if c.RegisterBurst == 0 {
		c.RegisterBurst = 5
	}
	if c.MaxHosts == 0 {
		c.MaxHosts = 10000
	}
	if c.MaxOwners == 0 {
		c.MaxOwners = 10 * c.MaxHosts
	}
	if c.MaxAttempts == 0 {
		c.MaxAttempts = 8
	}
	return c
}

// Validate refuses a configuration that cannot work.
func (c ServerConfig) Validate() error {
	if len(c.TURNURLs) > 0 && len(c.TURNSecret) == 0 {
		return errors.New("TURN server URLs given without the shared secret")
	}
	if len(c.TURNURLs) > coord.MaxTURNURLs {
		return errors.New("too many TURN server URLs")
	}
	for _, u := range c.TURNURLs {
		if err := coord.CheckTURNURL(u); err != nil {
			return err
		}
	}
	if c.LookupBurst < 0 || c.RegisterBurst < 0 || c.MaxHosts < 0 || c.MaxAttempts < 0 || c.MaxOwners < 0 {
		return errors.New("a negative burst or bound")
	}
	return nil
}
