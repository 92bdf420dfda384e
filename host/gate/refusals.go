package gate

import (
	"log/slog"
	"sort"
	"sync"
	"time"
)

// RefusalLog keeps refusals of connections that were never admitted from
// filling the log: per address (an IPv6 address by its /64) the first
// refusal of an interval is logged in full, later ones are only counted,
// and flush logs one summary line per address with the count by reason.
type RefusalLog struct {
	log   *slog.Logger
	every time.Duration
	mu    sync.Mutex
	addrs map[string]*refusals
}

// refusals is one address's refusals in the current interval.
type refusals struct {
	since    time.Time      // when the interval's first refusal was logged
	quiet    int            // refusals counted but not logged since
	byReason map[string]int // of the quiet ones
}

func NewRefusalLog(log *slog.Logger, every time.Duration) *RefusalLog {
	return &RefusalLog{log: log, every: every, addrs: map[string]*refusals{}}
}

// Refused logs a refusal from key with reason, or counts it if a line for
// key went out less than an interval ago. attrs are the full line's.
func (l *RefusalLog) Refused(now time.Time, key, msg, reason string, attrs ...any) {
	if l.open(now, key, reason, true) {
		l.log.Info(msg, attrs...)
	}
}

// Gone logs a connection that was never admitted and did nothing wrong
// (a joiner that left before admission): in full when no line for key
// went out this interval, else not at all. It is not a refusal and is
// not counted as one, but it starts key's interval, so a flood of them is
// one line per interval too.
func (l *RefusalLog) Gone(now time.Time, key, msg string, attrs ...any) {
	if l.open(now, key, "", false) {
		l.log.Info(msg, attrs...)
	}
}

// open reports whether a line for key may go out in full: when none did
// within the interval, it starts key's new interval (after a summary of
// the last one's quiet refusals) and says yes; otherwise it counts reason
// against the interval when count is set, and says no.
func (l *RefusalLog) open(now time.Time, key, reason string, count bool) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	r := l.addrs[key]
	if r != nil && now.Sub(r.since) < l.every {
		if count {
			r.quiet++
			r.byReason[reason]++
		}
		return false
	}
	if r != nil && r.quiet > 0 {
		l.summary(key, r)
	}
	l.addrs[key] = &refusals{since: now, byReason: map[string]int{}}
	return true
}

// Flush logs a summary for every address whose interval is over and
// forgets it.
func (l *RefusalLog) Flush(now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for key, r := range l.addrs {
		if now.Sub(r.since) < l.every {
			continue
		}
		if r.quiet > 0 {
			l.summary(key, r)
		}
		delete(l.addrs, key)
	}
}

// summary logs r's quiet refusals; l.mu is held.
func (l *RefusalLog) summary(key string, r *refusals) {
	reasons := make([]string, 0, len(r.byReason))
	for k := range r.byReason {
		reasons = append(reasons, k)
	}
	sort.Strings(reasons)
	attrs := []any{"addr", key, "count", r.quiet, "since", r.since}
	for _, k := range reasons {
		attrs = append(attrs, slog.Int("reason_"+k, r.byReason[k]))
	}
	l.log.Info("more clients refused", attrs...)
}
