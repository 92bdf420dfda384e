package main

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/lockhost/lockhost/lockstep"
)

// Config says how a soak runs. Its zero value works: Defaults fills every
// unset field.
type Config struct {
	// Duration is the soak once every client has joined: warm-up and
	// chaos (default 10 min). The initial joins come before it, the
	// checks after.
	Duration time.Duration
	// Clients is the population the soak keeps connected (default 64);
	// Full of them simulate fully and report state hashes (default 4),
	// the others are light (they follow the grant but simulate nothing).
	Clients, Full int
	// Seed drives the world, the chaos and the bots' commands (default 1).
	Seed uint64
	// Rate is the commands per second each bot sends, on average
	// (default 1).
	Rate float64
	// ChaosEvery is the mean time between chaos events (default 1 s).
	ChaosEvery time.Duration
	// HashEvery is the host's state-hash interval in ticks (default
	// lockstep.DefaultHashEvery).
	HashEvery int
	// Autosave is the host's autosave interval (default 20 s, or a fifth
	// of Duration when that is shorter, at least 1 s); Keep the
	// autosaves kept (default 3).
	Autosave time.Duration
	Keep     int
	// Warmup is how long the full population runs before the figures
	// the end is compared with are taken (default 20 s, or a sixth of
	// Duration when that is shorter).
	Warmup time.Duration
	// Progress is how often a progress line is printed (default 30 s, or
	// a quarter of Duration when that is shorter, at least 5 s).
	Progress time.Duration
	// Dir is the folder for the saves (default: a temporary folder made
	// and removed by Run).
	Dir string
	// HeapProfiles, if set, is a folder that gets pprof heap profiles at
	// the warm-up sample and at the end (heap-warm.pprof, heap-end.pprof),
	// to see what grew: go tool pprof -diff_base heap-warm.pprof heap-end.pprof.
	HeapProfiles string
	// Out receives the progress lines and the report (default
	// io.Discard).
	Out io.Writer
	// Logger receives the host's and the bots' logs (default: discarded).
	Logger *slog.Logger
}

// defaultFull is how many clients simulate fully unless told (all of them
// when there are fewer).
const defaultFull = 4

// Defaults returns c with every unset field filled in.
func (c Config) Defaults() Config {
	if c.Duration == 0 {
		c.Duration = 10 * time.Minute
	}
	if c.Clients == 0 {
		c.Clients = 64
	}
	if c.Full == 0 {
		c.Full = min(defaultFull, c.Clients)
	}
	if c.Seed == 0 {
		c.Seed = 1
	}
	if c.Rate == 0 {
		c.Rate = 1
	}
	if c.ChaosEvery == 0 {
		c.ChaosEvery = time.Second
	}
	if c.HashEvery == 0 {
		c.HashEvery = lockstep.DefaultHashEvery
	}
	if c.Autosave == 0 {
		c.Autosave = max(time.Second, min(20*time.Second, c.Duration/5))
	}
	if c.Keep == 0 {
		c.Keep = 3
	}
	if c.Warmup == 0 {
		c.Warmup = min(20*time.Second, c.Duration/6)
	}
	if c.Progress == 0 {
		c.Progress = max(5*time.Second, min(30*time.Second, c.Duration/4))
	}
	if c.Out == nil {
		c.Out = io.Discard
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c
}

// Validate reports settings that cannot work.
func (c Config) Validate() error {
	var errs []error
	if c.Duration < 10*time.Second {
		errs = append(errs, fmt.Errorf("duration %v: at least 10s (warm-up, then one of each chaos event)", c.Duration))
	}
	if c.Clients < 2 || c.Clients > 900 {
		errs = append(errs, fmt.Errorf("clients %d outside 2..900", c.Clients))
	}
	if c.Full < 1 || c.Full > c.Clients {
		errs = append(errs, fmt.Errorf("full clients %d outside 1..%d (the clients)", c.Full, c.Clients))
	}
	if c.Rate < 0 || c.Rate > 50 {
		errs = append(errs, fmt.Errorf("rate %v commands/s per bot outside 0..50", c.Rate))
	}
	if c.ChaosEvery < 50*time.Millisecond {
		errs = append(errs, fmt.Errorf("chaos interval %v: at least 50ms", c.ChaosEvery))
	}
	if c.HashEvery < 1 || c.HashEvery > 6000 {
		errs = append(errs, fmt.Errorf("hash interval %d ticks outside 1..6000", c.HashEvery))
	}
	if c.Autosave < 100*time.Millisecond {
		errs = append(errs, fmt.Errorf("autosave interval %v: at least 100ms", c.Autosave))
	}
	if c.Keep < 1 {
		errs = append(errs, fmt.Errorf("autosaves kept %d: at least 1", c.Keep))
	}
	if c.Warmup < 0 || c.Warmup >= c.Duration {
		errs = append(errs, fmt.Errorf("warm-up %v must be shorter than the duration %v", c.Warmup, c.Duration))
	}
	if c.Progress < time.Second {
		errs = append(errs, fmt.Errorf("progress interval %v: at least 1s", c.Progress))
	}
	return errors.Join(errs...)
}
