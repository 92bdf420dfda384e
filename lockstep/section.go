package lockstep

import "context"

// MaxRecipe bounds a Section's Recipe: a few numbers a game regenerates a
// section from, not the section itself.
const MaxRecipe = 256

// Section is a regenerable part of one map's encoding (MarshalMap's
// output): bytes a joiner that runs the game can make itself from Recipe,
// so the host need not send them. The section is Len bytes at Offset in
// the encoding; Hash is the XXH64 of those bytes.
type Section struct {
	Offset, Len uint64
	Hash        uint64
	// Recipe is what the game rebuilds the section from (at most
	// MaxRecipe bytes), opaque to everything but the game.
	Recipe []byte
}

// Sectioner is implemented by simulations whose map encodings hold a
// regenerable section, such as terrain made from a seed and never
// changed. MapSection describes map id's section in the map's current
// encoding; ok is false for an unknown map or one without a section. Like
// MarshalMap it only reads, and must be safe on a clone from several
// goroutines at once (Cloner).
type Sectioner interface {
	MapSection(id int32) (s Section, ok bool)
}

// SectionBuilder rebuilds a section from its recipe on a joiner, before it
// has any simulation: the bytes of the section the recipe was made for.
// The recipe comes from the host and is untrusted; a builder checks it
// and refuses (with an error) one that would need more than maxLen bytes.
// A builder stops soon after ctx is done and returns ctx's error: the
// joiner cancels what it no longer needs, and the work would otherwise
// take the cores its download and catch-up need.
type SectionBuilder func(ctx context.Context, recipe []byte, maxLen uint64) ([]byte, error)
