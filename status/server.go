package status

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"
)

// Default rate limit: replies per second per source IP, and burst.
const (
	DefaultRate  = 10
	DefaultBurst = 20
)

// Options configures a Server.
type Options struct {
	// Rate is replies per second per source IP (default DefaultRate);
	// a negative Rate turns the limit off.
	Rate float64
	// Burst is how many replies one source IP may get at once (default
	// DefaultBurst).
	Burst int
	// Logger receives structured logs (default slog.Default()). Dropped
	// datagrams are never logged, only counted.
	Logger *slog.Logger
}

// Server answers status requests on a PacketConn.
type Server struct {
	pc   net.PacketConn
	info func() Info
	log  *slog.Logger
	lim  *limiter
	now  func() time.Time // tests replace it

	replies, dropped atomic.Uint64
}

// NewServer returns a Server answering on pc with what info returns at the
// time of each request. info is called from Serve's goroutine and must be
// safe to call concurrently with whatever updates its data. Out-of-range
// values are clamped (negative counts to 0, strings cut to MaxString bytes
// of valid UTF-8) rather than refused.
func NewServer(pc net.PacketConn, info func() Info, opts Options) *Server {
	if opts.Rate == 0 {
		opts.Rate = DefaultRate
	}
	if opts.Burst <= 0 {
		opts.Burst = DefaultBurst
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	return &Server{
		pc:   pc,
		info: info,
		log:  opts.Logger,
		lim:  newLimiter(opts.Rate, opts.Burst),
		now:  time.Now,
	}
}

// Stats returns how many replies were sent and how many datagrams were
// dropped (malformed, over the rate limit, or failed to send).
func (s *Server) Stats() (replies, dropped uint64) {
	return s.replies.Load(), s.dropped.Load()
}

// Serve answers requests until ctx is done (it then returns nil) or pc
// fails, e.g. is closed (it then returns the read error). On ctx done it
// sets pc's read deadline to unblock the read; it does not close pc.
func (s *Server) Serve(ctx context.Context) error {
	stop := context.AfterFunc(ctx, func() { _ = s.pc.SetReadDeadline(time.Unix(1, 0)) })
	defer stop()
	s.log.Info("answering status queries (join ping) over UDP", "addr", s.pc.LocalAddr())

	// One byte more than a request: a longer datagram is truncated to
	// RequestSize+1 bytes and so still has the wrong size.
	in := make([]byte, RequestSize+1)
	out := make([]byte, 0, MaxPathsReplySize)
	for {
		n, addr, err := s.pc.ReadFrom(in)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			if errors.Is(err, net.ErrClosed) {
				s.log.Info("status: connection closed", "addr", s.pc.LocalAddr())
			}
			return err
		}
		id, version, ok := ParseRequestVersion(in[:n])
		if !ok || !s.lim.Allow(sourceKey(addr), s.now()) {
			s.dropped.Add(1)
			continue
		}
		reply, ok := s.reply(out[:0], id, version)
		if !ok {
			s.dropped.Add(1)
			continue
		}
		if _, err := s.pc.WriteTo(reply, addr); err != nil {
			s.dropped.Add(1)
			s.log.Debug("status: reply failed", "to", addr, "err", err)
			continue
		}
		s.replies.Add(1)
	}
}

// reply appends to dst the reply to ping id, of the request's version,
// with the current info.
func (s *Server) reply(dst []byte, id uint32, version byte) ([]byte, bool) {
	reply, err := AppendReplyVersion(dst, id, Sanitize(s.info()), version)
	if err != nil { // cannot happen after sanitize
		s.log.Error("status: cannot encode reply", "err", err)
		return dst, false
	}
	return reply, true
}

// Sanitize clamps info into what AppendReply accepts: negative counts to
// 0, strings cut to MaxString bytes of valid UTF-8. (Every Paths is
// encodable as it is.)
func Sanitize(i Info) Info {
	i.Players = max(i.Players, 0)
	i.MaxPlayers = max(i.MaxPlayers, 0)
	i.Databases = max(i.Databases, 0)
	i.GameName = clampString(i.GameName)
	i.GameVersion = clampString(i.GameVersion)
	return i
}

// clampString returns s as valid UTF-8 cut at a rune boundary to at most
// MaxString bytes.
func clampString(s string) string {
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	if len(s) <= MaxString {
		return s
	}
	cut := MaxString
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut]
}
