package host

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"sync"

	"github.com/lockhost/lockhost/status"
	"github.com/lockhost/lockhost/transport/lan"
	"github.com/lockhost/lockhost/wire"
)

// statusInfo builds a status reply's content: the host's static facts
// (the content hash computed once by New) and the players, their paths
// and the tick of the session's latest published Overview.
func (s *Server) statusInfo() status.Info {
	var players int32
	var tick uint64
	var paths status.Paths
	if o := s.sess.pub.overview.Load(); o != nil {
		tick = o.Tick
		for _, p := range o.Players {
			if !p.Spectator {
				players++
				paths.Add(p.Path)
			}
		}
	}
	hd := s.sess.defs.Load()
	var reach status.Reach
	if s.cfg.Reach != nil {
		reach = s.cfg.Reach()
	}
	return status.Info{
		Reach:       reach,
		Paths:       paths,
		Players:     players,
		MaxPlayers:  int32(s.cfg.Limits.MaxPlayers),
		GameName:    s.cfg.GameName,
		GameVersion: hd.content.GameVersion,
		Protocol:    wire.ProtocolVersion,
		Tick:        tick,
		Password:    len(s.cfg.Admission.Password) > 0,
		TLS:         s.cfg.Admission.TLS != nil,
		Databases:   int32(len(hd.content.Databases)),
		DefsHash:    hd.hash,
	}
}

// ServeStatus answers UDP status queries on pc until ctx is done.
func (s *Server) ServeStatus(ctx context.Context, pc net.PacketConn) error {
	return status.NewServer(pc, s.statusInfo, status.Options{Logger: s.cfg.Logger}).Serve(ctx)
}

// serveDiscovery answers LAN discovery probes on ls.Discovery, each socket
// on a goroutine of side, with the game port of ls.TCP.
func (s *Server) serveDiscovery(ctx context.Context, side *sync.WaitGroup, ls *Listeners) {
	if len(ls.Discovery) == 0 {
		return
	}
	opts := lan.Options{Logger: s.cfg.Logger}
	if ap, err := netip.ParseAddrPort(ls.TCP.Addr().String()); err == nil {
		opts.GamePort = ap.Port()
		if ap.Addr().IsLoopback() {
			opts.Accept = lan.LoopbackOnly
		}
	}
	if opts.GamePort == 0 {
		s.cfg.Logger.Warn("LAN discovery off: the game port is not a TCP port", "addr", ls.TCP.Addr())
		return
	}
	r := lan.NewResponder(s.statusInfo, opts)
	s.cfg.Logger.Info("answering LAN discovery (join discover)", "addr", ls.Discovery[0].LocalAddr().String(), "loopback_only", opts.Accept != nil)
	for _, pc := range ls.Discovery {
		side.Go(func() {
			if err := r.Serve(ctx, pc); err != nil {
				s.cfg.Logger.Error("LAN discovery", "addr", pc.LocalAddr(), "err", err)
			}
		})
	}
}

// listenStatus opens the UDP port with the TCP listener's number.
func listenStatus(ln net.Listener) (net.PacketConn, error) {
	pc, err := net.ListenPacket("udp", ln.Addr().String())
	if err != nil {
		return nil, fmt.Errorf("status port: %w", err)
	}
	return pc, nil
}
