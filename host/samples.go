package host

import (
	"slices"
	"sync"
	"time"
)

// Sample is the session at one moment, as the status page's charts show
// it: Server.Samples keeps one every Config.Samples.Every.
type Sample struct {
	At   time.Time
	Tick uint64
	// TicksPerSecond and BytesPerSecond are the ticks simulated and the
	// bytes written to every connection per second since the sample
	// before (the first sample: the measured tick rate, and no bytes).
	TicksPerSecond float64
	BytesPerSecond float64
	// BytesSent is Stats.BytesSent at At.
	BytesSent uint64
	// Players are the players online at At, in admission order.
	Players []PlayerSample
}

// PlayerSample is one player in a Sample.
type PlayerSample struct {
	ID        int32
	Name      string
	Spectator bool
	// Latency is the smoothed keepalive round trip (0 until measured).
	Latency time.Duration
}

// sampleRing keeps the last samples, a bounded ring. The session
// goroutine alone adds to it (take, from publishOverview); Server.Samples
// copies it from other goroutines, hence the lock.
type sampleRing struct {
	every time.Duration
	keep  int

	mu   sync.Mutex
	buf  []Sample // at most keep, oldest at next once full
	next int
}

func newSampleRing(every time.Duration, keep int) *sampleRing {
	return &sampleRing{every: every, keep: keep}
}

// take adds a sample of o, with sent the bytes written so far, if the
// last is at least every old.
func (r *sampleRing) take(o *Overview, sent uint64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	smp := Sample{At: o.At, Tick: o.Tick, TicksPerSecond: o.TicksPerSecond, BytesSent: sent}
	if last, ok := r.last(); ok {
		d := o.At.Sub(last.At)
		if d < r.every {
			return
		}
		smp.TicksPerSecond, smp.BytesPerSecond = 0, 0
		// Both counters only grow; a world replaced by an older one (a
		// relay host's arbiter) shows no ticks rather than a wrapped count.
		if o.Tick >= last.Tick {
			smp.TicksPerSecond = float64(o.Tick-last.Tick) / d.Seconds()
		}
		if sent >= last.BytesSent {
			smp.BytesPerSecond = float64(sent-last.BytesSent) / d.Seconds()
		}
	}
	smp.Players = make([]PlayerSample, len(o.Players))
	for i, p := range o.Players {
		smp.Players[i] = PlayerSample{ID: p.ID, Name: p.Name, Spectator: p.Spectator, Latency: p.Latency}
	}
	if len(r.buf) < r.keep {
		r.buf = append(r.buf, smp)
		return
	}
	r.buf[r.next] = smp
	r.next = (r.next + 1) % r.keep
}

// last is the newest sample. The caller holds mu.
func (r *sampleRing) last() (Sample, bool) {
	switch {
	case len(r.buf) == 0:
		return Sample{}, false
	case len(r.buf) < r.keep:
		return r.buf[len(r.buf)-1], true
	}
	return r.buf[(r.next+r.keep-1)%r.keep], true
}

// list copies the samples, oldest first.
func (r *sampleRing) list() []Sample {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]Sample, 0, len(r.buf))
	out = append(out, r.buf[r.next:]...)
	out = append(out, r.buf[:r.next]...)
	for i := range out {
		out[i].Players = slices.Clone(out[i].Players)
	}
	return out
}

// Samples returns the session's recent samples, oldest first: one every
// Config.Samples.Every, the last Config.Samples.Keep of them (by default
// one every 5 s for 30 min), for charts of the tick rate, the bytes sent
// and the players' latency.
func (s *Server) Samples() []Sample { return s.sess.pub.samples.list() }

// SampleEvery is the interval between two of Server.Samples.
func (s *Server) SampleEvery() time.Duration { return s.cfg.Samples.Every }
