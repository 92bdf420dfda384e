package colony

import (
	"bytes"
	"compress/gzip"
	"testing"

	"github.com/lockhost/lockhost/lockstep"
)

// benchWorld is the default world after a warm-up, so pawns are busy.
func benchWorld(b *testing.B) *World {
	b.Helper()
	c := testContent(b)
	w := mustNew(b, c, Config{})
	run(b, w, newScript(1, c), 600)
	return w
}

// BenchmarkStep measures one tick of the default world (4 maps of
// 250x250).
func BenchmarkStep(b *testing.B) {
	w := benchWorld(b)
	b.ResetTimer()
	for b.Loop() {
		w.Step()
	}
}

// BenchmarkCatchUp measures catching up 600 ticks (10 s of play) with
// the command script, as a joiner does.
func BenchmarkCatchUp(b *testing.B) {
	w := benchWorld(b)
	world, maps := snapshot(b, w)
	c := testContent(b)
	for b.Loop() {
		j, err := Load(c, world, maps)
		if err != nil {
			b.Fatal(err)
		}
		run(b, j, newScript(2, c), 600)
	}
}

func BenchmarkMarshalMap(b *testing.B) {
	w := benchWorld(b)
	data, _ := w.MarshalMap(0)
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for b.Loop() {
		if _, err := w.MarshalMap(0); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkMapHash(b *testing.B) {
	w := benchWorld(b)
	data, _ := w.MarshalMap(0)
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for b.Loop() {
		w.MapHash(0)
	}
}

// BenchmarkMapDigest measures MapDigest (the whole map's hash and its
// part hashes in one pass) on the map BenchmarkMapHash hashes.
func BenchmarkMapDigest(b *testing.B) {
	w := benchWorld(b)
	data, _ := w.MarshalMap(0)
	b.SetBytes(int64(len(data)))
	parts := make([]uint64, 0, len(partNames))
	b.ResetTimer()
	for b.Loop() {
		_, parts, _ = w.MapDigest(0, parts[:0])
	}
}

func BenchmarkWorldHash(b *testing.B) {
	w := benchWorld(b)
	for b.Loop() {
		w.WorldHash()
	}
}

func BenchmarkLoad(b *testing.B) {
	w := benchWorld(b)
	world, maps := snapshot(b, w)
	n := len(world)
	for _, m := range maps {
		n += len(m.Data)
	}
	b.SetBytes(int64(n))
	c := testContent(b)
	load := Loader(c)
	b.ResetTimer()
	for b.Loop() {
		if _, err := load(world, maps); err != nil {
			b.Fatal(err)
		}
	}
}

// TestEncodedSizes logs the size of the default world's encoding, raw and
// gzipped (run with -v).
func TestEncodedSizes(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	c := testContent(t)
	w := mustNew(t, c, Config{})
	run(t, w, newScript(1, c), 600)
	world, maps := snapshot(t, w)
	gz := func(b []byte) int {
		var buf bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&buf, gzip.DefaultCompression)
		zw.Write(b)
		zw.Close()
		return buf.Len()
	}
	total, totalGz := len(world), gz(world)
	t.Logf("world: %d bytes raw, %d gzip", len(world), gz(world))
	for _, m := range maps {
		g := gz(m.Data)
		total += len(m.Data)
		totalGz += g
		t.Logf("map %d: %d bytes raw, %d gzip", m.ID, len(m.Data), g)
	}
	t.Logf("total: %d bytes raw, %d gzip", total, totalGz)
	if total < 250_000 {
		t.Errorf("default world encodes to only %d bytes", total)
	}
}

// Big worlds. BenchmarkSized measures, for the default world and for
// worlds of SizedConfig(64 MiB) and SizedConfig(512 MiB), what the host
// and a joiner do with a whole world: generate it (New), step it, clone
// it, encode every map (MarshalMap, or AppendMap into one reused buffer),
// hash it and load it (Load, and MapLoader map by map). Pick a size with -bench 'Sized/64MiB'; the 512 MiB
// world takes about ten seconds to generate and 2 GB of memory in all.
// The world is warmed up by 200 ticks first, so pawns are busy and the
// maps' regions are built; Step is the mean over the following ticks.
func BenchmarkSized(b *testing.B) {
	sizes := []struct {
		name string
		cfg  Config
	}{
		{"default", Config{}},
		{"64MiB", SizedConfig(64<<20, 1)},
		{"512MiB", SizedConfig(512<<20, 1)},
	}
	c := testContent(b)
	for _, sz := range sizes {
		b.Run(sz.name, func(b *testing.B) {
			var w *World
			b.Run("New", func(b *testing.B) {
				for b.Loop() {
					w = nil
					w = mustNew(b, c, sz.cfg)
				}
			})
			if w == nil {
				w = mustNew(b, c, sz.cfg)
			}
			for range 200 {
				w.Step()
			}
			raw := 0
			for _, id := range w.MapIDs() {
				data, _ := w.MarshalMap(id)
				raw += len(data)
			}
			world, _ := w.MarshalWorld()
			raw += len(world)
			b.Logf("%+v: %d bytes raw (%.1f MiB)", sz.cfg, raw, float64(raw)/(1<<20))
			b.Run("Step", func(b *testing.B) {
				for b.Loop() {
					w.Step()
				}
			})
			b.Run("Clone", func(b *testing.B) {
				for b.Loop() {
					w.Clone()
				}
				b.ReportMetric(float64(raw), "raw-bytes")
			})
			b.Run("MarshalMap", func(b *testing.B) {
				b.SetBytes(int64(raw))
				for b.Loop() {
					for _, id := range w.MapIDs() {
						if _, err := w.MarshalMap(id); err != nil {
							b.Fatal(err)
						}
					}
				}
			})
			b.Run("AppendMap", func(b *testing.B) {
				b.SetBytes(int64(raw))
				var buf []byte
				for b.Loop() {
					for _, id := range w.MapIDs() {
						var err error
						if buf, err = w.AppendMap(buf[:0], id); err != nil {
							b.Fatal(err)
						}
					}
				}
			})
			b.Run("WorldHash", func(b *testing.B) {
				b.SetBytes(int64(raw))
				for b.Loop() {
					w.WorldHash()
				}
			})
			b.Run("Load", func(b *testing.B) {
				world, maps := snapshot(b, w)
				b.SetBytes(int64(raw))
				load := Loader(c)
				b.ResetTimer()
				for b.Loop() {
					if _, err := load(world, maps); err != nil {
						b.Fatal(err)
					}
				}
			})
			b.Run("MapLoader", func(b *testing.B) {
				world, maps := snapshot(b, w)
				b.SetBytes(int64(raw))
				ml := MapLoader(c)
				b.ResetTimer()
				for b.Loop() {
					a, err := ml.Begin(world, len(maps))
					if err != nil {
						b.Fatal(err)
					}
					for _, m := range maps {
						if err := a.AddMap(m); err != nil {
							b.Fatal(err)
						}
					}
					if _, err := a.Finish(); err != nil {
						b.Fatal(err)
					}
				}
			})
		})
	}
}

// steadyWorld is the default world (seed 1) after 600 ticks without
// commands: the state a joiner catches up from.
func steadyWorld(b *testing.B) *World {
	b.Helper()
	w := mustNew(b, testContent(b), Config{Seed: 1})
	for range 600 {
		w.Step()
	}
	return w
}

// BenchmarkSteadyStep measures one tick of the default world in its
// steady state, as a joiner catches up: it steps a clone, which starts
// without derived data (regions, remembered failed searches) just like a
// loaded world. Run it with -benchtime 6000x for the catch-up rate over
// 6,000 ticks (reported as ticks/s).
func BenchmarkSteadyStep(b *testing.B) {
	w := steadyWorld(b).clone()
	b.ResetTimer()
	for b.Loop() {
		w.Step()
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ticks/s")
}

// BenchmarkCheckpointSized measures one checkpoint as the host takes it
// (lockstep.Hasher on a clone, one worker, every map hashed) of a 64 MiB
// SizedConfig world: most of its bytes are terrain, most of its records
// things.
func BenchmarkCheckpointSized(b *testing.B) {
	w := mustNew(b, testContent(b), SizedConfig(64<<20, 1))
	for range 3 {
		w.Step()
	}
	c := w.Clone()
	var h lockstep.Hasher
	b.ResetTimer()
	for b.Loop() {
		h.Take(c)
	}
}
