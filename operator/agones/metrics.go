package agones

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// States an Agent reports, as it last told the SDK server.
const (
	StateStarting  = "Starting"  // before Ready
	StateReady     = "Ready"     // Ready, no player has come
	StateAllocated = "Allocated" // allocated by Agones, or a player came
	StateShutdown  = "Shutdown"  // the idle or first-player shutdown was asked for
)

var agentStates = []string{StateStarting, StateReady, StateAllocated, StateShutdown}

// State is the GameServer state the Agent last set.
func (a *Agent) State() string {
	if s, ok := a.state.Load().(string); ok {
		return s
	}
	return StateStarting
}

// Status is what an Agent last told the SDK server, for other goroutines
// (the status page).
type Status struct {
	// State is the GameServer state the Agent last set (a State…).
	State string
	// Players is the size of the players List as the Agent last set it.
	Players int
	// HealthPings counts the health pings the SDK server took; LastPing
	// is when the Agent sent the last of them (zero: none yet).
	HealthPings int64
	LastPing    time.Time
}

// Status returns what the Agent last told the SDK server; it is safe to
// call from any goroutine while the Agent runs.
func (a *Agent) Status() Status {
	st := Status{State: a.State(), Players: int(a.listed.Load()), HealthPings: a.Pings()}
	if ns := a.pinged.Load(); ns != 0 {
		st.LastPing = time.Unix(0, ns)
	}
	return st
}

var (
	stateDesc = prometheus.NewDesc("lockhost_agones_state",
		"The Agones GameServer state the host last set: 1 for the current one.", []string{"state"}, nil)
	pingsDesc = prometheus.NewDesc("lockhost_agones_health_pings_total",
		"Health pings the Agones SDK server took.", nil, nil)
	playersDesc = prometheus.NewDesc("lockhost_agones_players",
		"Names in the Agones players List, as the host last set it.", nil, nil)
)

// Collector returns the Agent's metrics: its state, its health pings and
// the size of the players List.
func (a *Agent) Collector() prometheus.Collector { return collector{a} }

type collector struct{ a *Agent }

func (c collector) Describe(ch chan<- *prometheus.Desc) {
	ch <- stateDesc
	ch <- pingsDesc
	ch <- playersDesc
}

func (c collector) Collect(ch chan<- prometheus.Metric) {
	now := c.a.State()
	for _, s := range agentStates {
		v := 0.0
		if s == now {
			v = 1
		}
		ch <- prometheus.MustNewConstMetric(stateDesc, prometheus.GaugeValue, v, s)
	}
	ch <- prometheus.MustNewConstMetric(pingsDesc, prometheus.CounterValue, float64(c.a.Pings()))
	ch <- prometheus.MustNewConstMetric(playersDesc, prometheus.GaugeValue, float64(c.a.listed.Load()))
}
