package host

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"

	"github.com/lockhost/lockhost/lockstep"
)

// Server hosts one session on a listener.
type Server struct {
	cfg     Config
	content Content
	sess    *session
	nextID  atomic.Int32
	conns   sync.WaitGroup
}

// New returns a server for sim. cfg is completed with Defaults and
// validated.
func New(cfg Config, content Content, sim lockstep.Sim) (*Server, error) {
	cfg = cfg.Defaults()
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("host config: %w", err)
	}
	if sim == nil {
		return nil, errors.New("host: no simulation")
	}
	return &Server{cfg: cfg, content: content, sess: newSession(cfg, sim)}, nil
}

// Serve runs the session and accepts clients on ln until ctx is done, then
// tells every client the host is closing, closes ln and waits for the
// connections to finish.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go s.sess.run(ctx)
	go func() {
		<-ctx.Done()
		ln.Close()
	}()
	s.cfg.Logger.Info("hosting", "addr", ln.Addr().String(), "game", s.cfg.GameName, "tick_rate", s.cfg.TickRate)
	var err error
	for {
		nc, aerr := ln.Accept()
		if aerr != nil {
			if ctx.Err() == nil {
				err = fmt.Errorf("accept: %w", aerr)
			}
			break
		}
		s.conns.Add(1)
		go func() {
			defer s.conns.Done()
			s.handle(ctx, nc)
		}()
	}
	cancel()
	<-s.sess.done
	s.conns.Wait()
	return err
}

// ListenAndServe listens on addr (TCP) and serves until ctx is done.
func (s *Server) ListenAndServe(ctx context.Context, addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	return s.Serve(ctx, ln)
}

// Submit hands a command to the session as if from player (use 0 for the
// host itself). It returns false once the session has ended.
func (s *Server) Submit(player int32, c lockstep.Command) bool {
	c.Player = player
	return s.sess.submitCommand(c)
}
