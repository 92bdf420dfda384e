package main

import (
	"fmt"
	"runtime"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/lockhost/lockhost/game/colony"
	"github.com/lockhost/lockhost/snapshot"
	"github.com/lockhost/lockhost/testing/procstat"
)

// zstdSetting is one way to compress a world's blobs with zstd.
type zstdSetting struct {
	level    int   // zstd's numbering, as --compression zstd:LEVEL
	window   int   // bytes; 0: as large as each blob (single segment)
	lowerMem bool  // the library's lower-memory tables, as the host uses
	size     int64 // compressed bytes of every blob
	cpu      time.Duration
	inflate  time.Duration
}

// compareZstd measures, on the raw blobs of a generated world of mib MiB,
// the four speeds klauspost/compress's zstd offers (levels 1, 3, 6, 10:
// it maps 1-2, 3-5, 6-9 and 10+ to them) with the host's 1 MiB window,
// and the best two with a window as large as each blob: compressed size,
// one core's compression time, one core's inflate time. It is what a
// choice of --compression (or of the window) for a narrow uplink is made
// from; the fastest of two runs each, on a shared machine.
func compareZstd(mib int) error {
	raws, err := worldBlobs(mib)
	if err != nil {
		return err
	}
	var total int64
	for _, r := range raws {
		total += int64(len(r))
	}
	fmt.Printf("zstd on the %d raw blobs of the %d MiB world (%.1f MB raw), one core, fastest of two:\n", len(raws), mib, float64(total)/1e6)
	settings := []zstdSetting{
		{level: 1, window: 1 << 20, lowerMem: true}, {level: 3, window: 1 << 20, lowerMem: true},
		{level: 6, window: 1 << 20, lowerMem: true}, {level: 10, window: 1 << 20, lowerMem: true},
		{level: 6, lowerMem: true}, {level: 10, lowerMem: true}, {level: 10},
	}
	var base *zstdSetting
	for i := range settings {
		s := &settings[i]
		if err := s.measure(raws); err != nil {
			return err
		}
		if s.level == snapshot.DefaultZstdLevel && s.window == 1<<20 {
			base = s
		}
	}
	for _, s := range settings {
		win := "blob"
		if s.window > 0 {
			win = fmt.Sprintf("%d MiB", s.window>>20)
		}
		rel := ""
		if base != nil {
			rel = fmt.Sprintf(" (%.3fx zstd:%d, 1 MiB)", float64(s.size)/float64(base.size), snapshot.DefaultZstdLevel)
		}
		fmt.Printf("  zstd:%-2d window %-8s lowmem %-5v %9.3f MB%s  compress %6.0f ms (%5.1f MB/s raw)  inflate %5.0f ms  at 10 Mbit/s %5.1f s\n",
			s.level, win, s.lowerMem, float64(s.size)/1e6, rel, procstat.Ms(s.cpu), float64(total)/1e6/s.cpu.Seconds(),
			procstat.Ms(s.inflate), float64(s.size)*8/10e6)
	}
	return nil
}

// worldBlobs generates the world of mib MiB and returns the raw bytes of
// each blob of its join point (the world blob and every map).
func worldBlobs(mib int) ([][]byte, error) {
	content, _, err := colony.DefaultContent()
	if err != nil {
		return nil, fmt.Errorf("content: %w", err)
	}
	sim, err := colony.New(content, colony.SizedConfig(int64(mib)<<20, 1))
	if err != nil {
		return nil, fmt.Errorf("world: %w", err)
	}
	p, err := snapshot.Build(sim, snapshot.BuildOptions{Compression: snapshot.Compression{Codec: snapshot.Zstd, Level: 1}})
	if err != nil {
		return nil, fmt.Errorf("build: %w", err)
	}
	blobs := []snapshot.Blob{p.World}
	for _, m := range p.Maps {
		blobs = append(blobs, m.Blob)
	}
	raws := make([][]byte, 0, len(blobs))
	for _, b := range blobs {
		raw, err := snapshot.Decompress(b, 1<<31)
		if err != nil {
			return nil, fmt.Errorf("inflate: %w", err)
		}
		raws = append(raws, raw)
	}
	return raws, nil
}

// measure compresses every blob with s on one goroutine, twice, keeping
// the faster, then inflates the result twice.
func (s *zstdSetting) measure(raws [][]byte) error {
	out := make([][]byte, len(raws))
	s.cpu, s.inflate = time.Duration(1<<62), time.Duration(1<<62)
	for range 2 {
		runtime.GC()
		start := time.Now()
		s.size = 0
		for i, raw := range raws {
			window := s.window
			if window == 0 {
				window = max(zstd.MinWindowSize, ceilPow2(len(raw)))
			}
			enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.EncoderLevelFromZstd(s.level)),
				zstd.WithEncoderConcurrency(1), zstd.WithEncoderCRC(false),
				zstd.WithWindowSize(window), zstd.WithLowerEncoderMem(s.lowerMem))
			if err != nil {
				return fmt.Errorf("zstd:%d window %d: %w", s.level, window, err)
			}
			out[i] = enc.EncodeAll(raw, out[i][:0])
			s.size += int64(len(out[i]))
		}
		s.cpu = min(s.cpu, time.Since(start))
	}
	dec, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxWindow(zstd.MaxWindowSize))
	if err != nil {
		return err
	}
	defer dec.Close()
	var buf []byte
	for range 2 {
		runtime.GC()
		start := time.Now()
		for _, o := range out {
			if buf, err = dec.DecodeAll(o, buf[:0]); err != nil {
				return fmt.Errorf("inflate zstd:%d: %w", s.level, err)
			}
		}
		s.inflate = min(s.inflate, time.Since(start))
	}
	return nil
}

// ceilPow2 is the smallest power of two at least n.
func ceilPow2(n int) int {
	p := 1
	for p < n {
		p <<= 1
	}
	return p
}
