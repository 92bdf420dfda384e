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

// Percent is the tools' former GOGC, a middle way for a program that
// holds a big world: the heap may grow by half what is live before a
// collection, so the peak is about 1.5 times the world rather than twice.
// The host and the join tool now use HostPercent and JoinPercent.
const Percent = 50

// HostPercent is the GOGC the host runs with. Its heap at a peak is the
// world, a clone of the things at a checkpoint or a join point's cut, and
// the zstd encoders and compressed blobs of a join point being built: on
// a 204 MiB world about 520 MB live, so at Percent the heap may reach
// about 780 MB, which was most of the host's peak resident size. The
// world is mostly pointer-free (terrain, things, the derived cell data),
// so a collection marks little and costs little however large the heap
// is. Measured there, before and after runs interleaved: peak 719–736 MiB
// at 20 against 923–924 MiB at 50 with one joiner, 689–742 against
// 947–953 with four at once, the slowest second 59–60 ticks (45–60 at
// 50), idle CPU about the same. A
// memory limit below the heap's peak (debug.SetMemoryLimit, 460 and 520
// MiB) made the collector run back to back while a join point was built:
// slowest second 21 and 39 ticks, so the host sets none.
const HostPercent = 20

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

// ApplyHost sets HostPercent, unless GOGC is set in the environment,
// which wins.
func ApplyHost() { apply(HostPercent) }

// ApplyJoin sets JoinPercent, unless GOGC is set in the environment, which
// wins.
func ApplyJoin() { apply(JoinPercent) }

func apply(percent int) {
	if _, set := os.LookupEnv("GOGC"); set {
		return
	}
	debug.SetGCPercent(percent)
}
