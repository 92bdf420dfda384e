package web

import (
	"encoding/json"
	"net/http"
	"time"

	"github.com/lockhost/lockhost/host"
)

// Sampler keeps the session's recent samples; *host.Server is one. A
// Source that is also a Sampler gets /api/samples, which the page's
// charts draw.
type Sampler interface {
	Samples() []host.Sample
	SampleEvery() time.Duration
}

// samplesJSON is /api/samples: the samples oldest first, one every
// every_ms. Rates are per second since the sample before.
type samplesJSON struct {
	ServedAt *time.Time   `json:"served_at"`
	EveryMs  float64      `json:"every_ms"`
	Samples  []sampleJSON `json:"samples"`
}

type sampleJSON struct {
	At             *time.Time         `json:"at"`
	Tick           uint64             `json:"tick"`
	TicksPerSecond float64            `json:"ticks_per_second"`
	BytesPerSecond float64            `json:"bytes_per_second"`
	BytesSent      uint64             `json:"bytes_sent"`
	Players        []samplePlayerJSON `json:"players"`
}

type samplePlayerJSON struct {
	ID        int32   `json:"id"`
	Name      string  `json:"name"`
	Spectator bool    `json:"spectator"`
	LatencyMs float64 `json:"latency_ms"`
}

// samplesView is the JSON of samples taken every every, as of now.
func samplesView(samples []host.Sample, every time.Duration, now time.Time) samplesJSON {
	v := samplesJSON{ServedAt: stamp(now), EveryMs: ms(every), Samples: make([]sampleJSON, 0, len(samples))}
	for _, s := range samples {
		players := make([]samplePlayerJSON, 0, len(s.Players))
		for _, p := range s.Players {
			players = append(players, samplePlayerJSON{ID: p.ID, Name: p.Name, Spectator: p.Spectator, LatencyMs: ms(p.Latency)})
		}
		v.Samples = append(v.Samples, sampleJSON{At: stamp(s.At), Tick: s.Tick, TicksPerSecond: s.TicksPerSecond,
			BytesPerSecond: s.BytesPerSecond, BytesSent: s.BytesSent, Players: players})
	}
	return v
}

// samples serves /api/samples.
func (h *handler) samples(w http.ResponseWriter, r *http.Request) {
	sm, ok := h.src.(Sampler)
	if !ok {
		http.Error(w, "not found: this host keeps no samples", http.StatusNotFound)
		return
	}
	h.serveJSON(w, "samples", func() ([]byte, error) {
		return json.Marshal(samplesView(sm.Samples(), sm.SampleEvery(), time.Now()))
	})
}
