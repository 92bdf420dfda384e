package metrics

import (
	"fmt"
	"time"

	"github.com/lockhost/lockhost/host"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// Source gives the session's picture at scrape time; *host.Server is one.
type Source interface {
	Overview() host.Overview
}

// Bucket bounds, in seconds.
var (
	// durationBuckets spans a millisecond (a refusal on loopback) to two
	// minutes (a big world's download and catch-up on a slow link).
	durationBuckets = []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120}
	// saveBuckets spans a small world saved to a fast disk to a big one
	// saved to a slow disk.
	saveBuckets = []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30}
)

// Host counts a host's joins, desyncs and saves as they happen; it is a
// host.Observer. Its methods are safe for concurrent use. Make one with
// New, set it as host.Config.Observer, then Register it with the server
// as its Source.
type Host struct {
	joins       *prometheus.CounterVec
	joinTime    *prometheus.HistogramVec
	phaseTime   *prometheus.HistogramVec
	joinBytes   prometheus.Counter
	resumed     prometheus.Counter
	resumes     prometheus.Counter
	desyncs     *prometheus.CounterVec
	repairTime  prometheus.Histogram
	saveTime    prometheus.Histogram
	saveFails   prometheus.Counter
	lastSave    prometheus.Gauge
	lastSaveLen prometheus.Gauge
	byPath      *prometheus.CounterVec
	connects    *prometheus.CounterVec
}

// ConnectOutcomes are the outcomes of a joiner's connection attempt
// through a coordinator as the host answers it: the path it took, or
// failed, or busy (too many attempts under way).
var ConnectOutcomes = []string{"direct", "punched", "turn-udp", "turn-tcp", "turn-tls", "turn", "failed", "busy"}

var _ host.Observer = (*Host)(nil)

// New returns a Host with every counter at zero. The series whose labels
// are known in advance (each join phase, each desync event, a successful
// join) exist from the start, so a rate over them never misses its first
// event.
func New() *Host {
	h := &Host{
		joins: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "lockhost_joins_total",
			Help: "Finished join attempts by outcome (joined, refused, timed_out, dropped, left) and the wire reason of a refusal (empty when joined).",
		}, []string{"outcome", "reason"}),
		joinTime: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "lockhost_join_duration_seconds",
			Help:    "Time from a connection's first byte to the end of its join attempt, by outcome.",
			Buckets: durationBuckets,
		}, []string{"outcome"}),
		phaseTime: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "lockhost_join_phase_duration_seconds",
			Help:    "Time each completed phase of a join took on the host (handshake, defs, admission, download, catch_up, clock_sync).",
			Buckets: durationBuckets,
		}, []string{"phase"}),
		joinBytes: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "lockhost_join_world_bytes_total",
			Help: "World snapshot bytes sent to joiners.",
		}),
		resumed: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "lockhost_resumed_bytes_total",
			Help: "World snapshot bytes not sent again because a joiner retrying after a dropped connection already held them.",
		}),
		resumes: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "lockhost_join_retries_total",
			Help: "Join attempts that retried a join whose connection dropped before WorldReady.",
		}),
		desyncs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "lockhost_desync_events_total",
			Help: "Desync events by kind: detected, repaired, dropped, explained (the host worked out where it began).",
		}, []string{"event"}),
		repairTime: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "lockhost_desync_repair_duration_seconds",
			Help:    "Time from detecting a desync to matching hashes, for repaired desyncs.",
			Buckets: durationBuckets,
		}),
		saveTime: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "lockhost_autosave_duration_seconds",
			Help:    "Time taken by each successful save (autosaves and the final save).",
			Buckets: saveBuckets,
		}),
		saveFails: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "lockhost_autosave_failures_total",
			Help: "Save attempts that failed.",
		}),
		lastSave: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "lockhost_autosave_last_success_timestamp_seconds",
			Help: "Unix time of the last successful save (0: none yet).",
		}),
		lastSaveLen: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "lockhost_autosave_last_bytes",
			Help: "Size in bytes of the last successful save.",
		}),
		byPath: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "lockhost_joins_by_path_total",
			Help: "Finished join attempts by the way the connection came (lan, direct over TCP or WebSocket by the joiner's address, or the ICE path: direct, punched, turn-udp, turn-tcp, turn-tls, turn) and outcome (as lockhost_joins_total's).",
		}, []string{"path", "outcome"}),
		connects: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "lockhost_connect_attempts_total",
			Help: "Joiners' connection attempts through the coordinator the host answered, by outcome: the path taken (direct, punched, turn-udp, turn-tcp, turn-tls, turn), failed, or busy.",
		}, []string{"outcome"}),
	}
	for _, o := range ConnectOutcomes {
		h.connects.WithLabelValues(o)
	}
	h.joins.WithLabelValues(host.JoinOK, "")
	h.joinTime.WithLabelValues(host.JoinOK)
	for _, p := range host.JoinPhases {
		h.phaseTime.WithLabelValues(p)
	}
	for _, e := range []string{host.DesyncDetected, host.DesyncRepaired, host.DesyncDropped, host.DesyncExplained} {
		h.desyncs.WithLabelValues(e)
	}
	return h
}

// JoinFinished implements host.Observer: it counts the attempt and
// observes its phases and total time.
func (h *Host) JoinFinished(r host.JoinRecord) {
	h.joins.WithLabelValues(r.Outcome, r.Reason).Inc()
	if r.Path != "" {
		h.byPath.WithLabelValues(r.Path, r.Outcome).Inc()
	}
	h.joinTime.WithLabelValues(r.Outcome).Observe(r.Total.Seconds())
	for _, p := range r.Phases {
		h.phaseTime.WithLabelValues(p.Phase).Observe(p.D.Seconds())
	}
	if r.Bytes > 0 {
		h.joinBytes.Add(float64(r.Bytes))
	}
	if r.Resumed > 0 {
		h.resumed.Add(float64(r.Resumed))
	}
	if r.Retry {
		h.resumes.Inc()
	}
}

// ConnectAttempt counts one joiner's connection attempt through a
// coordinator, by outcome (one of ConnectOutcomes).
func (h *Host) ConnectAttempt(outcome string) {
	h.connects.WithLabelValues(outcome).Inc()
}

// Desync implements host.Observer: it counts the event and observes a
// repair's duration.
func (h *Host) Desync(r host.DesyncRecord) {
	h.desyncs.WithLabelValues(r.Event).Inc()
	if r.Event == host.DesyncRepaired && r.Repair > 0 {
		h.repairTime.Observe(r.Repair.Seconds())
	}
}

// Saved implements host.Observer: it observes a save's duration or counts
// its failure.
func (h *Host) Saved(r host.SaveRecord) {
	if r.Err != "" {
		h.saveFails.Inc()
		return
	}
	h.saveTime.Observe(r.D.Seconds())
	at := r.At
	if at.IsZero() {
		at = time.Now()
	}
	h.lastSave.Set(float64(at.UnixNano()) / 1e9)
	h.lastSaveLen.Set(float64(r.Bytes))
}

// Register adds the Host's metrics to reg and, when src is not nil, the
// metrics read from src at each scrape: the session's tick and speed, the
// players online and how far behind they are, and the host's counters.
func (h *Host) Register(reg prometheus.Registerer, src Source) error {
	cs := []prometheus.Collector{h.joins, h.joinTime, h.phaseTime, h.joinBytes, h.resumed, h.resumes, h.desyncs,
		h.repairTime, h.saveTime, h.saveFails, h.lastSave, h.lastSaveLen, h.byPath, h.connects}
	if src != nil {
		cs = append(cs, newStateCollector(src))
	}
	for _, c := range cs {
		if err := reg.Register(c); err != nil {
			return fmt.Errorf("register host metrics: %w", err)
		}
	}
	return nil
}

// NewRegistry returns a registry (not the global default one) holding the
// Go runtime and process metrics and h's metrics with src (see Register).
func NewRegistry(h *Host, src Source) (*prometheus.Registry, error) {
	reg := prometheus.NewRegistry()
	for _, c := range []prometheus.Collector{
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("register runtime metrics: %w", err)
		}
	}
	if err := h.Register(reg, src); err != nil {
		return nil, err
	}
	return reg, nil
}
