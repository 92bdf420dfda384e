// Command soak is a load and fault soak of the host, in one process over
// loopback TCP: a real host (the embedded default world, autosaving into a
// temporary folder) and a population of bot clients that send random valid
// commands, most of them light (they follow the session without
// simulating) and a few simulating fully and reporting state hashes. For
// the chosen duration a chaos loop joins new players, makes players leave,
// drops connections under them (a reset, no goodbye), rejoins dropped or
// departed players with their session token (a full client from the world
// it held, the host replaying the commands it missed: the first drop cuts
// a full client, and the summary counts rejoins from a held world and
// rejoins that downloaded), and corrupts a map of a full
// client at a step so the host must detect and repair it; it keeps the
// population near its target all along. Beside the bots, hostile clients
// from other loopback addresses abuse the host (hostile.go): squatters
// that download a byte a second, a lag griefer that never advances, a
// desync looper that never finishes its repair, and a connect-and-close
// flood; each rule must drop them and the cool-down refuse their rejoins.
//
// Afterwards it checks that every full client has the host's world and map
// hashes at one tick and every light client still acknowledges ticks;
// that goroutines and the heap did not grow past their bounds and nothing
// is left once the clients and the host are gone; that the final save and
// the newest autosave load (the final save being the host's last state);
// and that the host counted no save error, no desync drop and no desync
// that was not injected. It prints the figures and one line per check, and
// exits 1 if any check failed.
//
//	scripts/soak [--duration 10m] [--clients 64] [--full 4] [--seed 1]
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"
)

// Exit codes.
const (
	exitPass  = 0
	exitFail  = 1
	exitUsage = 2
)

// grace is how long past its duration a soak may take (joins, settling,
// checks, saves) before it gives up.
const grace = 3 * time.Minute

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	cfg, err := parseConfig(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return exitPass
	}
	if err != nil {
		return exitUsage
	}
	cfg.Out = stdout
	dir, err := os.MkdirTemp("", "lockhost-soak-")
	if err != nil {
		fmt.Fprintf(stderr, "soak: temp dir: %v\n", err)
		return exitFail
	}
	defer os.RemoveAll(dir)
	cfg.Dir = dir

	// Never hang: the run gets duration + grace, and the process a little
	// more to report before it is ended from here.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, cfg.Duration+grace)
	defer cancel()
	watchdog := time.AfterFunc(cfg.Duration+grace+30*time.Second, func() {
		fmt.Fprintf(stderr, "soak: FAIL: still running %v after the start; giving up\n", cfg.Duration+grace+30*time.Second)
		os.RemoveAll(dir)
		os.Exit(exitFail)
	})
	defer watchdog.Stop()

	res, err := Run(ctx, cfg)
	if err != nil {
		fmt.Fprintf(stderr, "soak: FAIL: %v\n", err)
		return exitFail
	}
	if !res.Passed() {
		return exitFail
	}
	return exitPass
}

// usage is the help text, before the flags' defaults.
const usage = `Usage: scripts/soak [flags]

Runs a real host (the embedded default world, autosaving into a temporary
folder) and --clients bot clients over loopback TCP in this process. The
bots send random valid commands; --full of them simulate the world and
report state hashes, the others are light (they follow the session without
simulating). For --duration a chaos loop joins new players, makes players
leave, drops connections under them (a reset, no goodbye), rejoins dropped
or departed players with their session token (a full client from the
world it held, sent only the commands it missed; the first drop cuts a full
client), and corrupts one map of a full client at a step so the host must detect and repair it, keeping the
population near --clients. Meanwhile hostile clients, each from its own
loopback address, abuse the host: 3 squatters that acknowledge the world a
byte a second, a lag griefer that never advances, a desync looper that
never finishes its repair (each rejoining at once when dropped, then after
the cool-down), and a flood that connects and hangs up 200 times a second.
A progress line is printed every 30 s (--progress).

Then it checks, and exits 1 with one line per failed check, unless:
  - every full client has the host's world hash and map hashes at one tick,
    and every light client is connected and acknowledged a tick within
    the last 120 ticks;
  - goroutines at the end (same population as after the warm-up) are at
    most the warm-up's + 10% + 50; with every client gone they are back to
    the host's own + 10, and once the host stopped to the start's + 5;
  - the live heap after a forced GC is at most 1.5x the warm-up's + 32 MiB;
  - the final save and the newest autosave load, the final save is at
    least as new as the autosave and holds the host's last state, and
    autosaves were written (at least half as many as the interval allows);
  - the host counted no save error and no desync drop, detected exactly
    the desyncs injected and repaired each one, every join and rejoin
    worked (a rejoin as the same player) and no client was disconnected
    except by the chaos (the hostile clients' desyncs and drops apart);
  - the hostile clients met only the rules meant for them and, when the
    chaos lasted 25 s or more, each was dropped and a rejoin refused in
    its cool-down; the flood stayed off the status page's joins list.
Exit codes: 0 pass, 1 a check failed or the soak could not run, 2 usage.

Flags:
`

// parseConfig reads the command line into a soak's Config with its
// defaults filled in (Out is left to the caller). A problem is reported
// on stderr and returned; --help returns flag.ErrHelp.
func parseConfig(args []string, stderr io.Writer) (Config, error) {
	fs := flag.NewFlagSet("soak", flag.ContinueOnError)
	fs.SetOutput(stderr)
	// The flags' defaults are the Config's; those that depend on another
	// setting are 0 here, and Defaults fills them in.
	def := Config{}.Defaults()
	var cfg Config
	var verbose bool
	fs.DurationVar(&cfg.Duration, "duration", def.Duration, "how long the soak runs once every client joined, warm-up and chaos (at least 10s); the checks follow")
	fs.IntVar(&cfg.Clients, "clients", def.Clients, "bot clients kept connected")
	fs.IntVar(&cfg.Full, "full", 0, fmt.Sprintf("of the clients, how many simulate fully and report state hashes, the rest being light (default %d, or --clients if fewer)", defaultFull))
	fs.Uint64Var(&cfg.Seed, "seed", def.Seed, "seed of the world, the chaos and the bots' commands")
	fs.Float64Var(&cfg.Rate, "rate", def.Rate, "commands per second each bot sends, on average")
	fs.DurationVar(&cfg.ChaosEvery, "chaos-every", def.ChaosEvery, "mean time between chaos events (join, leave, drop, rejoin, desync)")
	fs.IntVar(&cfg.HashEvery, "hash-every", def.HashEvery, "ticks between the host's state-hash checks")
	fs.DurationVar(&cfg.Autosave, "autosave", 0, "the host's autosave interval (default 20s, or a fifth of --duration if shorter)")
	fs.IntVar(&cfg.Keep, "keep", def.Keep, "autosaves the host keeps")
	fs.DurationVar(&cfg.Warmup, "warmup", 0, "time with every client in before the figures the end is compared with (default 20s, or a sixth of --duration if shorter)")
	fs.DurationVar(&cfg.Progress, "progress", 0, "interval of the progress lines (default 30s, or a quarter of --duration if shorter)")
	fs.StringVar(&cfg.HeapProfiles, "heap-profiles", "", "write pprof heap profiles at the warm-up sample and the end into `DIR`")
	fs.BoolVar(&verbose, "v", false, "log the host's and the bots' warnings and errors to standard error")
	fs.Usage = func() {
		fmt.Fprint(stderr, usage)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return Config{}, err // the flag package reported it
	}
	if fs.NArg() > 0 {
		err := fmt.Errorf("soak takes no arguments, got %q (see --help)", fs.Arg(0))
		fmt.Fprintln(stderr, err)
		return Config{}, err
	}
	if verbose {
		cfg.Logger = slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	cfg = cfg.Defaults()
	if err := cfg.Validate(); err != nil {
		fmt.Fprintf(stderr, "soak: %v\n", err)
		return Config{}, err
	}
	return cfg, nil
}
