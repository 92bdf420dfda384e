package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/lockhost/lockhost/join"
)

// progressBar draws join progress on one terminal line, or prints a line
// per phase when the output is not a terminal.
type progressBar struct {
	mu    sync.Mutex
	w     io.Writer
	tty   bool
	off   bool
	phase join.Phase
	began time.Time // when the phase began
	last  time.Time
	drawn bool
}

func newProgressBar(w io.Writer, quiet bool) *progressBar {
	tty := false
	if f, ok := w.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			tty = true
		}
	}
	return &progressBar{w: w, tty: tty, off: quiet}
}

func (b *progressBar) update(p join.Progress) {
	if b.off {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	newPhase := p.Phase != b.phase
	b.phase = p.Phase
	if newPhase {
		b.began = time.Now()
	}
	if !b.tty {
		if newPhase {
			fmt.Fprintf(b.w, "%s...\n", p.Phase)
		}
		return
	}
	finished := p.Total > 0 && p.Done >= p.Total
	// A queued report comes only when the place in line changes: each is drawn.
	if !newPhase && !finished && p.Phase != join.PhaseQueued && time.Since(b.last) < 100*time.Millisecond {
		return
	}
	b.last = time.Now()
	line := fmt.Sprintf("%-10s", p.Phase)
	if p.Phase == join.PhaseQueued && p.Done > 0 {
		line += fmt.Sprintf(" number %d in line for an upload slot", p.Done)
	}
	if p.Total > 0 {
		const width = 30
		filled := int(min(p.Done, p.Total) * width / p.Total)
		unit, done, total := "", float64(p.Done), float64(p.Total)
		if p.Phase == join.PhaseDownload {
			unit, done, total = " MiB", done/(1<<20), total/(1<<20)
		} else {
			unit = " ticks"
		}
		line += fmt.Sprintf(" [%s%s] %.1f/%.1f%s %3d%%", strings.Repeat("#", filled), strings.Repeat(".", width-filled),
			done, total, unit, min(p.Done, p.Total)*100/p.Total)
		if el := time.Since(b.began).Seconds(); el > 0.2 && p.Done > 0 {
			rate := done / el
			line += fmt.Sprintf("  %.1f%s/s", rate, unit)
			if p.Done < p.Total {
				line += fmt.Sprintf("  ETA %s", (time.Duration((total - done) / rate * float64(time.Second))).Round(time.Second))
			}
		}
	}
	fmt.Fprintf(b.w, "\r%-100s", line)
	b.drawn = true
}

// clear removes the bar so other output starts on a clean line.
func (b *progressBar) clear() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.drawn {
		fmt.Fprintf(b.w, "\r%-100s\r", "")
		b.drawn = false
	}
}
