// Package gcpolicy sets the garbage collector's pace for the host and
// join tools. Both hold one large, long-lived world (hundreds of MiB for
// a big one) and make most of their garbage in bursts beside it: the host
// when it builds a join point, the joiner while it loads. Go's default
// (GOGC=100) lets the heap reach twice what is live before collecting, so
// the process's peak is about twice its world; measured on a 204 MiB
// world, the host's heap peaked at 1134 MB with 567 MB live, the joiner's
// at 669 MB with 399 MB live.
package gcpolicy

import (
	"os"
	"runtime/debug"
)

// Percent is the GOGC the tools run with: the heap may grow by half what
// is live before a collection, so the peak is about 1.5 times the world
// rather than twice, for about half again the collector's CPU while
// garbage is made (little else: a running session makes little).
const Percent = 50

// JoinPercent is the GOGC the join tool runs with. A joiner's heap is
// almost all the world it loads, and most of that (terrain, things, the
// derived tables) holds no pointers, so a collection costs little to mark
// however big the world: collecting after every 20% of growth rather than
// every 50% keeps the heap's peak at about 1.2 times the world. Measured
// on a 204 MiB world (three interleaved joins each), the joiner's peak
// resident memory went from 558-568 MiB to 482-486 MiB (with the smaller
// blocked-cell set of package colony) for about the same CPU. A soft
// memory limit sized from the world was tried and not kept: a limit of
// 450 MiB held the peak at 457 MiB, but one of 400 MiB, below what the
// world needs once caught up, made the collector run without end and the
// joiner fell so far behind that the host dropped it. A percentage has no
// such cliff when a world holds more than its estimate.
const JoinPercent = 20

// Apply sets Percent, unless GOGC is set in the environment, which wins.
func Apply() { apply(Percent) }

// ApplyJoin sets JoinPercent, unless GOGC is set in the environment, which
// wins.
func ApplyJoin() { apply(JoinPercent) }

func apply(percent int) {
	if _, set := os.LookupEnv("GOGC"); set {
		return
	}
	debug.SetGCPercent(percent)
}
