package host

import (
	"context"
	"fmt"
	"net"

	"github.com/lockhost/lockhost/status"
	"github.com/lockhost/lockhost/wire"
)

// liveInfo is what the session publishes each tick for status replies.
type liveInfo struct {
	players int32
	tick    uint64
}

// statusInfo builds a status reply's content: the host's static facts
// (the content hash computed once by New) and the session's latest players
// and tick.
func (s *Server) statusInfo() status.Info {
	li, _ := s.sess.live.Load().(liveInfo)
	return status.Info{
		Players:     li.players,
		MaxPlayers:  int32(s.cfg.MaxPlayers),
		GameName:    s.cfg.GameName,
		GameVersion: s.content.GameVersion,
		Protocol:    wire.ProtocolVersion,
		Tick:        li.tick,
		Password:    len(s.cfg.Password) > 0,
		TLS:         s.cfg.TLS != nil,
		Databases:   int32(len(s.content.Databases)),
		DefsHash:    s.defsHash,
	}
}

// ServeStatus answers UDP status queries on pc until ctx is done.
func (s *Server) ServeStatus(ctx context.Context, pc net.PacketConn) error {
	return status.NewServer(pc, s.statusInfo, status.Options{Logger: s.cfg.Logger}).Serve(ctx)
}

// listenStatus opens the UDP port with the TCP listener's number.
func listenStatus(ln net.Listener) (net.PacketConn, error) {
	pc, err := net.ListenPacket("udp", ln.Addr().String())
	if err != nil {
		return nil, fmt.Errorf("status port: %w", err)
	}
	return pc, nil
}
