// Command bench-resume measures what a dropped connection costs a join,
// through the real binaries on loopback: a host serves a generated world
// (64 MiB of raw state by default) and a joiner joins through a relay
// that cuts its first connection once, after 6 MB from the host. It
// prints the world's compressed size and the bytes the host wrote in all
// (its lockhost_bytes_sent_total) for three joins: a clean one, the cut
// one that retries and resumes, and the cut one with --no-reconnect
// followed by a fresh join (starting over, as before resuming existed).
// It prints figures; it asserts nothing.
//
//	go run ./scripts/cmd/bench-resume [-world-mib 64] [-cut-mb 6]
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/lockhost/lockhost/testing/procstat"
	"github.com/lockhost/lockhost/testing/syncbuf"
	"github.com/lockhost/lockhost/testing/testkit"
)

func main() {
	mib := flag.Int("world-mib", 64, "the world's raw size, as host serve --world-mib")
	cutMB := flag.Float64("cut-mb", 6, "cut the first connection after this many MB (10^6 bytes) from the host")
	flag.Parse()
	if err := run(*mib, int64(*cutMB*1e6)); err != nil {
		fmt.Fprintln(os.Stderr, "bench-resume:", err)
		os.Exit(1)
	}
}

type bench struct {
	host, joiner string
	game, web    string // the host's addresses
	logs         *syncbuf.Buffer
}

func run(mib int, cut int64) error {
	dir, err := os.MkdirTemp("", "benchresume-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	b := &bench{game: "127.0.0.1:30680", web: "127.0.0.1:30681", logs: &syncbuf.Buffer{}}
	if b.host, err = procstat.BuildTool(dir, "./cmd/host"); err != nil {
		return err
	}
	if b.joiner, err = procstat.BuildTool(dir, "./cmd/join"); err != nil {
		return err
	}
	cmd := exec.Command(b.host, "serve", "--listen", b.game, "--http", b.web, "--world-mib", strconv.Itoa(mib), "--seed", "1",
		"--log-format", "json", "--log-level", "debug", "--conn-rate", "-1", "--data-dir", filepath.Join(dir, "data")) // debug: the join point built line
	cmd.Stderr = b.logs
	if err := cmd.Start(); err != nil {
		return err
	}
	defer func() {
		_ = cmd.Process.Signal(os.Interrupt)
		_ = cmd.Wait()
	}()
	world, err := b.waitBuilt()
	if err != nil {
		return err
	}
	fmt.Printf("bench-resume: %d MiB world, %s compressed (the join point's blobs); the first connection cut after %s\n\n",
		mib, mb(world), mb(float64(cut)))
	fmt.Printf("%-34s %12s %9s %12s %9s\n", "join", "host wrote", "x world", "resumed", "wall")

	clean, err := b.measure("clean", func() (string, error) { return b.join(b.game, "Clean") })
	if err != nil {
		return err
	}
	b.row("clean join", clean, world)

	var out string
	resumed, err := b.measure("resumed", func() (string, error) {
		relay, err := cutFirst(b.game, cut)
		if err != nil {
			return "", err
		}
		defer relay.Close()
		out, err = b.join(relay.Addr(), "Flaky")
		return out, err
	})
	if err != nil {
		return err
	}
	b.row("cut once, retried and resumed", resumed, world)

	over, err := b.measure("over", func() (string, error) {
		relay, err := cutFirst(b.game, cut)
		if err != nil {
			return "", err
		}
		defer relay.Close()
		if out, err := b.join(relay.Addr(), "Again", "--no-reconnect"); err == nil {
			return out, errors.New("the cut join did not fail with --no-reconnect")
		}
		return b.join(b.game, "Again2")
	})
	if err != nil {
		return err
	}
	b.row("cut once, started over", over, world)
	fmt.Println("\nhost wrote: the host's lockhost_bytes_sent_total during the join (all packets); resumed: lockhost_resumed_bytes_total")
	fmt.Println("the resumed join's tool said:")
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if strings.HasPrefix(line, "connection lost") || strings.HasPrefix(line, "WorldReady") {
			fmt.Println("  " + line)
		}
	}
	return nil
}

// cost is what one join cost the host.
type cost struct {
	sent, resumed float64
	wall          time.Duration
}

func (b *bench) row(name string, c cost, world float64) {
	fmt.Printf("%-34s %12s %8.3fx %12s %9s\n", name, mb(c.sent), c.sent/world, mb(c.resumed), c.wall.Round(time.Millisecond))
}

// measure runs fn and returns the host's bytes written and resumed
// meanwhile, waiting for the counters to settle (the host leaves the
// player after the tool exits).
func (b *bench) measure(name string, fn func() (string, error)) (cost, error) {
	sent0, res0, err := b.counters()
	if err != nil {
		return cost{}, err
	}
	start := time.Now()
	if _, err := fn(); err != nil {
		return cost{}, fmt.Errorf("%s: %w", name, err)
	}
	wall := time.Since(start)
	var sent, res float64
	for prev := -1.0; ; prev = sent {
		time.Sleep(300 * time.Millisecond) // the keepalives of others are all that moves it now
		if sent, res, err = b.counters(); err != nil {
			return cost{}, err
		}
		if sent-prev < 4096 {
			break
		}
	}
	return cost{sent: sent - sent0, resumed: res - res0, wall: wall}, nil
}

var metric = regexp.MustCompile(`(?m)^(lockhost_bytes_sent_total|lockhost_resumed_bytes_total) (\S+)$`)

func (b *bench) counters() (sent, resumed float64, err error) {
	resp, err := http.Get("http://" + b.web + "/metrics")
	if err != nil {
		return 0, 0, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, 0, err
	}
	for _, m := range metric.FindAllStringSubmatch(string(body), -1) {
		v, _ := strconv.ParseFloat(m[2], 64)
		if m[1] == "lockhost_bytes_sent_total" {
			sent = v
		} else {
			resumed = v
		}
	}
	return sent, resumed, nil
}

var built = regexp.MustCompile(`"msg":"join point built".*?"bytes":([0-9]+)`)

// waitBuilt waits for the host's first join point and returns its
// compressed size.
func (b *bench) waitBuilt() (float64, error) {
	deadline := time.Now().Add(3 * time.Minute)
	for time.Now().Before(deadline) {
		if m := built.FindStringSubmatch(b.logs.String()); m != nil {
			return strconv.ParseFloat(m[1], 64)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return 0, fmt.Errorf("no join point built:\n%s", b.logs.String())
}

func (b *bench) join(addr, name string, extra ...string) (string, error) {
	args := append([]string{addr, "--name", name, "--exit-after-ready", "-q", "--no-input"}, extra...)
	cmd := exec.Command(b.joiner, args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if err != nil {
		return out.String(), fmt.Errorf("join %s: %v\n%s", name, err, out.String())
	}
	return out.String(), nil
}

func mb(n float64) string { return fmt.Sprintf("%.2f MB", n/1e6) }

// cutFirst relays to the host and cuts the first connection after cut
// bytes from the host: the joiner reads them and then the end of the
// stream, the host's side is reset.
func cutFirst(target string, cut int64) (*testkit.Relay, error) {
	r, err := testkit.NewRelay(target)
	if err != nil {
		return nil, err
	}
	r.CutAfter(0, cut)
	return r, nil
}
