package colony

import "sync/atomic"

// Planted faults, for the tests of desync explanations (the fault corpus
// in explain_test.go): each makes one machine's world go wrong at one
// tick the way a real bug would, so a test can check that the
// explanation names that tick and the field that went wrong. Nothing
// outside this package's tests plants one: World.fault is nil in every
// session, and each site costs one nil check.
//
// Faults that need no site in the simulation are planted by the tests
// directly: a field changed outside a step, a command applied twice or
// dropped, a different def value (a copy of the rules).

// faultKind names a planted fault's site.
type faultKind uint8

const (
	// faultPawnOrder steps every map's pawns in reverse order at the
	// tick, as a loop over a Go map does in some runs and not in others:
	// order() says whether this run does.
	faultPawnOrder faultKind = iota + 1
	// faultPathTie breaks ties between equally good open nodes of the
	// path search toward the higher cell at the tick.
	faultPathTie
	// faultOverflow computes plant growth in 16 bits at the tick, as a
	// machine with a narrower integer would.
	faultOverflow
	// faultClock adds a reading of the clock to the temperature drawn at
	// the tick (a multiple of tempTicks).
	faultClock
	// faultSkipID gives a thing spawned by a command at the tick the ID
	// after the one it should have.
	faultSkipID
	// faultCloneDrop makes a clone taken at the tick lose every pawn's
	// move cool-down, as a Clone that forgets a field would.
	faultCloneDrop
	// faultEncodeDrop makes an encoding made at the tick write every
	// pawn's hunger as 0, as an encoder that forgets a field would.
	faultEncodeDrop
)

// fault is one planted fault. The world it is planted in and the clones
// of that world share it.
type fault struct {
	kind faultKind
	tick uint64
	// clock is faultClock's clock; each reading differs from the last.
	clock func() int32
	// order is faultPawnOrder's choice, asked once per run through the
	// tick.
	order func() bool
	// spent marks a one-shot fault (faultCloneDrop, faultEncodeDrop) that
	// has fired: the clone or the encoding made at the tick went wrong,
	// the ones made later at the same tick (a re-simulation's) do not.
	spent atomic.Bool
}

// faultAt returns the planted fault of kind k if it fires now (at the
// world's current tick), or nil.
func (w *World) faultAt(k faultKind) *fault {
	f := w.fault
	if f == nil || f.kind != k || f.tick != w.tick {
		return nil
	}
	if (k == faultCloneDrop || k == faultEncodeDrop) && f.spent.Swap(true) {
		return nil
	}
	return f
}
