package lan

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lockhost/lockhost/internal/ratelimit"
	"github.com/lockhost/lockhost/status"
)

// The default rate limits: replies per second and bursts, per source
// address and for all sources together (a probe's source address can be
// forged, so the total is bounded too), and the allowance for new
// sources once the total is spent (Options.NewRate).
const (
	DefaultRate       = 10
	DefaultBurst      = 20
	DefaultTotalRate  = 100
	DefaultTotalBurst = 100
	DefaultNewRate    = 20
	DefaultNewBurst   = 20
)

// maxSources bounds how many source addresses the limiter tracks, and
// how many sources answered lately the responder remembers.
const maxSources = 1 << 16

// recentWindow is how long a source (address and port) counts as
// answered lately: far longer than a flood from a few thousand sources
// takes to be answered once each within the total limit, so its sources
// do not pass for new ones; a prober's next discovery comes from a new
// socket.
const recentWindow = 30 * time.Second

// Options configures a Responder.
type Options struct {
	// GamePort is the TCP port joiners connect to; it is in every reply.
	GamePort uint16
	// Rate and Burst limit replies per source address (defaults
	// DefaultRate, DefaultBurst).
	Rate  float64
	Burst int
	// TotalRate and TotalBurst limit replies to all sources together
	// (defaults DefaultTotalRate, DefaultTotalBurst).
	TotalRate  float64
	TotalBurst int
	// NewRate and NewBurst are the allowance, beyond the total, for new
	// sources: a probe from an address and port not answered lately
	// (recentWindow) that the total turns down is answered from it
	// (defaults DefaultNewRate, DefaultNewBurst; a negative NewRate, no
	// allowance). A flood from sources the total keeps answering then
	// does not starve an honest prober, which probes from a new socket
	// each discovery, and the host's replies to all sources together
	// stay within TotalRate plus NewRate a second.
	NewRate  float64
	NewBurst int
	// HostID is the host's ID in every reply (Reply.HostID); zero, a
	// random one is drawn.
	HostID uint64
	// Accept, if set, says whether to answer a probe from this address;
	// a host that listens on loopback answers only loopback probes.
	Accept func(netip.Addr) bool
	// Logger receives structured logs (default slog.Default()).
	Logger *slog.Logger
}

// Responder answers discovery probes with the host's game port and what
// info returns at the time of each probe.
type Responder struct {
	info func() status.Info
	opts Options
	lim  *ratelimit.Table[netip.Addr]
	now  func() time.Time // tests replace it

	mu        sync.Mutex
	total     ratelimit.Bucket             // guarded by mu
	fresh     ratelimit.Bucket             // the allowance for new sources; guarded by mu
	answered  map[netip.AddrPort]time.Time // sources answered lately, and when; guarded by mu
	lastSweep time.Time                    // when answered was last swept; guarded by mu

	replies, dropped atomic.Uint64
}

// NewResponder returns a Responder answering with info, which must be safe
// to call from several goroutines.
func NewResponder(info func() status.Info, opts Options) *Responder {
	if opts.Rate == 0 {
		opts.Rate = DefaultRate
	}
	if opts.Burst <= 0 {
		opts.Burst = DefaultBurst
	}
	if opts.TotalRate <= 0 {
		opts.TotalRate = DefaultTotalRate
	}
	if opts.TotalBurst <= 0 {
		opts.TotalBurst = DefaultTotalBurst
	}
	if opts.NewRate == 0 {
		opts.NewRate = DefaultNewRate
	}
	if opts.NewBurst <= 0 {
		opts.NewBurst = DefaultNewBurst
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	for opts.HostID == 0 {
		opts.HostID = rand.Uint64()
	}
	return &Responder{
		info:     info,
		opts:     opts,
		lim:      ratelimit.NewTable[netip.Addr](opts.Rate, opts.Burst, maxSources),
		now:      time.Now,
		answered: make(map[netip.AddrPort]time.Time),
	}
}

// Stats returns how many replies were sent and how many datagrams were
// dropped (malformed, refused, over a rate limit, or failed to send).
func (r *Responder) Stats() (replies, dropped uint64) {
	return r.replies.Load(), r.dropped.Load()
}

// Serve answers probes on pc until ctx is done (it then returns nil) or
// pc fails (it returns the read error). It does not close pc.
func (r *Responder) Serve(ctx context.Context, pc net.PacketConn) error {
	stop := context.AfterFunc(ctx, func() { _ = pc.SetReadDeadline(time.Unix(1, 0)) })
	defer stop()
	// One byte more than a probe: a longer datagram is truncated to
	// ProbeSize+1 bytes and so still has the wrong size.
	in := make([]byte, ProbeSize+1)
	out := make([]byte, 0, MaxReplySize)
	for {
		n, from, err := pc.ReadFrom(in)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("discovery: %w", err)
		}
		reply, ok := r.answer(out[:0], in[:n], from)
		if !ok {
			r.dropped.Add(1)
			continue
		}
		if _, err := pc.WriteTo(reply, from); err != nil {
			r.dropped.Add(1)
			r.opts.Logger.Debug("discovery: reply failed", "to", from, "err", err)
			continue
		}
		r.replies.Add(1)
	}
}

// answer appends to dst the reply to probe p from from, if it is to be
// answered.
func (r *Responder) answer(dst, p []byte, from net.Addr) ([]byte, bool) {
	id, ok := ParseProbe(p)
	if !ok {
		return dst, false
	}
	src := sourceAddr(from)
	if r.opts.Accept != nil && !r.opts.Accept(src) {
		return dst, false
	}
	now := r.now()
	if !r.lim.Allow(src, now) || !r.take(sourceAddrPort(from), now) {
		return dst, false
	}
	reply, err := AppendReply(dst, Reply{GamePort: r.opts.GamePort, HostID: r.opts.HostID, ProbeID: id, Info: status.Sanitize(r.info())})
	if err != nil {
		r.opts.Logger.Error("discovery: cannot encode reply", "err", err)
		return dst, false
	}
	if len(reply) > len(p) { // cannot happen: MaxReplySize < ProbeSize
		return dst, false
	}
	return reply, true
}

// take takes one reply to source from the limit on all sources
// together or, when that is spent and source was not answered lately,
// from the allowance for new sources; it notes source as answered.
func (r *Responder) take(source netip.AddrPort, now time.Time) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	ok := r.total.Take(now, r.opts.TotalRate, float64(r.opts.TotalBurst))
	if !ok && r.opts.NewRate >= 0 && r.isNew(source, now) {
		ok = r.fresh.Take(now, r.opts.NewRate, float64(r.opts.NewBurst))
	}
	if ok {
		r.noteAnswered(source, now)
	}
	return ok
}

// isNew reports whether source was not answered within recentWindow
// of now. While the table of sources answered lately is full, no source
// is new: a flood from that many sources gets the total only.
func (r *Responder) isNew(source netip.AddrPort, now time.Time) bool {
	if at, ok := r.answered[source]; ok {
		return now.Sub(at) >= recentWindow
	}
	return len(r.answered) < maxSources
}

// noteAnswered remembers that source was answered at now, forgetting
// the sources answered longer than recentWindow ago once a window, or
// once a second (ratelimit.SweepEvery) while the table is full. (Replies
// are limited, so the table holds about the total and new rates times
// recentWindow, a few thousand sources by default.)
func (r *Responder) noteAnswered(source netip.AddrPort, now time.Time) {
	since := now.Sub(r.lastSweep)
	if since >= recentWindow || len(r.answered) >= maxSources && since >= ratelimit.SweepEvery {
		for s, at := range r.answered {
			if now.Sub(at) >= recentWindow {
				delete(r.answered, s)
			}
		}
		r.lastSweep = now
	}
	if _, ok := r.answered[source]; ok || len(r.answered) < maxSources {
		r.answered[source] = now
	}
}

// sourceAddrPort is a datagram's source address and port, the address
// as sourceAddr gives it; the zero AddrPort when it is not IP.
func sourceAddrPort(a net.Addr) netip.AddrPort {
	if u, ok := a.(*net.UDPAddr); ok {
		return netip.AddrPortFrom(sourceAddr(a), u.AddrPort().Port())
	}
	return netip.AddrPort{}
}

// sourceAddr is a datagram's source IP address, IPv4-mapped IPv6
// unmapped, without zone; the zero Addr when it is not IP.
func sourceAddr(a net.Addr) netip.Addr {
	if u, ok := a.(*net.UDPAddr); ok {
		return u.AddrPort().Addr().Unmap().WithZone("")
	}
	return netip.Addr{}
}
