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

// statusInfo builds a status reply's content: the host's static facts and
// the session's latest players and tick.
func (s *Server) statusInfo() status.Info {
	li, _ := s.sess.live.Load().(liveInfo)
	types := make([]string, len(s.content.Databases))
	counts := make([]int32, len(types))
	hashes := make([]uint64, len(types))
	for i, d := range s.content.Databases {
		types[i], counts[i], hashes[i] = d.Type, d.Count, d.Hash
	}
	return status.Info{
		Players:     li.players,
		MaxPlayers:  int32(s.cfg.MaxPlayers),
		GameName:    s.cfg.GameName,
		GameVersion: s.content.GameVersion,
		Protocol:    wire.ProtocolVersion,
		Tick:        li.tick,
		Password:    len(s.cfg.Password) > 0,
		TLS:         s.cfg.TLS != nil,
		Databases:   int32(len(types)),
		DefsHash:    status.DefsHash(types, counts, hashes),
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
