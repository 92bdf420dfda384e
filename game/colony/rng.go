package colony

// rng is a splitmix64 generator. Its whole state is one uint64, stored in
// the world or the map it belongs to and encoded with it.
type rng struct{ s uint64 }

func (g *rng) next() uint64 {
	g.s += 0x9E3779B97F4A7C15
	return mix64(g.s)
}

// intn returns a value in [0, n); 0 when n <= 0.
func (g *rng) intn(n int32) int32 {
	if n <= 0 {
		return 0
	}
	return int32(g.next() % uint64(n))
}

// between returns a value in [lo, hi].
func (g *rng) between(lo, hi int32) int32 {
	if hi <= lo {
		return lo
	}
	return lo + g.intn(hi-lo+1)
}

// chance is true with probability num/den.
func (g *rng) chance(num, den int32) bool {
	return g.intn(den) < num
}

// mix64 is the splitmix64 finalizer: a stateless 64-bit mixer.
func mix64(z uint64) uint64 {
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
	z = (z ^ (z >> 27)) * 0x94D049BB133111EB
	return z ^ (z >> 31)
}
