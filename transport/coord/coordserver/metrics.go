package coordserver

import (
	"github.com/lockhost/lockhost/transport/coord"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// serverMetrics are the coordinator's counters, on its own registry.
type serverMetrics struct {
	reg           *prometheus.Registry
	registrations *prometheus.CounterVec
	lookups       *prometheus.CounterVec
	signals       *prometheus.CounterVec
	attempts      *prometheus.CounterVec
	connectTime   *prometheus.HistogramVec
}

func newServerMetrics(s *Server) *serverMetrics {
	m := &serverMetrics{
		reg: prometheus.NewRegistry(),
		registrations: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "lockhost_coordinator_registrations_total",
			Help: "Host registrations by result: ok, refused (a bad first message, the coordinator full), limited (rate limit)."}, []string{"result"}),
		lookups: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "lockhost_coordinator_lookups_total",
			Help: "Invite code lookups by result: found, unknown, bad (not a code), limited (rate limit)."}, []string{"result"}),
		signals: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "lockhost_coordinator_signal_attempts_total",
			Help: "Signalling attempts by result: opened, busy (the host has too many open), limited (rate limit)."}, []string{"result"}),
		attempts: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "lockhost_coordinator_connect_attempts_total",
			Help: "Connection attempts joiners reported, by outcome: the path that worked (lan, direct, punched, turn-udp, turn-tcp, turn-tls, turn) or failed."}, []string{"outcome"}),
		connectTime: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "lockhost_coordinator_connect_seconds",
			Help:    "Time from lookup to connection (or to giving up) joiners reported, by outcome.",
			Buckets: []float64{0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30}}, []string{"outcome"}),
	}
	hosts := prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "lockhost_coordinator_hosts",
		Help: "Hosts registered now."}, func() float64 { return float64(s.Hosts()) })
	m.reg.MustRegister(m.registrations, m.lookups, m.signals, m.attempts, m.connectTime, hosts,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	for _, o := range coord.Outcomes {
		m.attempts.WithLabelValues(o)
	}
	return m
}

func (m *serverMetrics) handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}
