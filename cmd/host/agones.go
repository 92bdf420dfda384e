package main

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/lockhost/lockhost/cmd/internal/cliutil"
	"github.com/lockhost/lockhost/operator/agones"
	"github.com/lockhost/lockhost/operator/web"
	"github.com/lockhost/lockhost/tlsid"
	"github.com/lockhost/lockhost/wire"
	"github.com/urfave/cli/v2"
)

// defaultAgonesIdle is --agones-idle's default.
const defaultAgonesIdle = 5 * time.Minute

// defaultAgonesFirstPlayer is --agones-first-player's default: long
// enough for a player handed the address by a matchmaker to start the
// join tool (or, in relay mode, for the arbiter to connect and upload),
// short enough that an allocation nobody uses does not hold a pod for
// long.
const defaultAgonesFirstPlayer = 5 * time.Minute

// agonesFlags are serve's options for running as an Agones game server.
func agonesFlags() []cli.Flag {
	return []cli.Flag{
		&cli.BoolFlag{Name: "agones", Usage: "run as an Agones game server: mark it Ready once the world is loaded and the listeners bound, ping Health while the session runs, keep the players List and labels a matchmaker selects on, and shut down after --agones-idle; on by itself when " + agones.PortEnv + " is set"},
		&cli.DurationFlag{Name: "agones-idle", Value: defaultAgonesIdle, Usage: "with --agones: shut down (after the final save) once the session has had no player this long since its last player left"},
		&cli.DurationFlag{Name: "agones-first-player", Value: defaultAgonesFirstPlayer, Usage: "with --agones: shut down (after the final save) when Agones has allocated the game server and no player (in relay mode, no arbiter either) has come this long after; a Ready server not yet allocated waits in the Fleet regardless"},
	}
}

// agonesClient is the SDK client serve uses, or nil when the host runs
// outside Agones: --agones, or AGONES_SDK_HTTP_PORT set, switches it on.
func agonesClient(c *cli.Context) (*agones.Client, error) {
	port, set, err := agones.PortFromEnv()
	if err != nil {
		return nil, cliutil.Usagef("%v", err)
	}
	if !set && !c.Bool("agones") {
		return nil, nil
	}
	if !set {
		port = agones.DefaultPort
	}
	return agones.NewClient(port)
}

// newAgent makes the Agones agent of the host, or nil outside Agones.
func (s *serving) newAgent() *agones.Agent {
	if s.agones == nil {
		return nil
	}
	labels, annotations := s.agonesFacts().Metadata()
	return agones.NewAgent(agones.AgentConfig{
		Client: s.agones, Session: s.srv, Labels: labels, Annotations: annotations,
		Idle: s.c.Duration("agones-idle"), FirstPlayer: s.c.Duration("agones-first-player"), Logger: s.log,
	})
}

// agonesStatus is what the status page shows of the Agones agent, or nil
// outside Agones (the page then shows no Agones card).
func (s *serving) agonesStatus() func() web.Agones {
	if s.agent == nil {
		return nil
	}
	return func() web.Agones {
		st := s.agent.Status()
		return web.Agones{State: st.State, Players: st.Players, HealthPings: st.HealthPings, LastPing: st.LastPing}
	}
}

// startAgones runs the Agones agent beside the host until ctx ends; the
// channel closes when it has stopped. Without --agones it is closed at
// once.
func (s *serving) startAgones(ctx context.Context) <-chan struct{} {
	done := make(chan struct{})
	if s.agent == nil {
		close(done)
		return done
	}
	go func() {
		defer close(done)
		if err := s.agent.Run(ctx); err != nil {
			s.log.Error("agones: the game server was not marked ready; Agones will find it unhealthy", "err", err)
		}
	}()
	return done
}

// agonesFacts are what the labels say of this host.
func (s *serving) agonesFacts() agones.Facts {
	f := agones.Facts{
		Game:      s.cfg.GameName,
		Protocol:  wire.ProtocolVersion,
		Databases: s.content.Databases,
		Password:  len(s.cfg.Admission.Password) > 0,
	}
	if t := s.cfg.Admission.TLS; t != nil && len(t.Certificates) > 0 {
		f.Fingerprint = tlsid.Fingerprint(t.Certificates[0])
	}
	return f
}

// agonesShutdown tells Agones the game server is done, once the host has
// stopped and written its final save.
func agonesShutdown(client *agones.Client, log *slog.Logger) {
	if client == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := client.Shutdown(ctx); err != nil {
		log.Warn("agones shutdown failed", "err", fmt.Errorf("after the host stopped: %w", err))
		return
	}
	log.Info("agones: game server shut down")
}
