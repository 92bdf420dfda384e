package main

import (
	"encoding/binary"
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

// compareZstd measures, on the raw blobs of a generated world of mib
// MiB, where the compressed bytes come from (terrain, things and the
// rest, each compressed apart, and two transforms of them), then the four
// speeds klauspost/compress's zstd offers (levels 1, 3, 6, 10: it maps
// 1-2, 3-5, 6-9 and 10+ to them) with the host's 1 MiB window, and the
// best two with a window as large as each blob: compressed size, one
// core's compression time, one core's inflate time. It is what a choice
// of --compression (or of the window) for a narrow uplink is made from;
// the fastest of two runs each, on a shared machine.
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
	for _, level := range []int{snapshot.DefaultZstdLevel, 10} {
		if err := whereTheBytesAre(raws, level); err != nil {
			return err
		}
	}
	return printSettings(raws, settings, total)
}

// printSettings measures each setting on raws and prints a line each.
func printSettings(raws [][]byte, settings []zstdSetting, total int64) error {
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
	start := time.Now()
	sim, err := colony.New(content, colony.SizedConfig(int64(mib)<<20, 1))
	if err != nil {
		return nil, fmt.Errorf("world: %w", err)
	}
	fmt.Printf("generating the world (terrain, things, pawns from the seed) took %v here, on every core\n", time.Since(start).Round(time.Millisecond))
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

// mapParts splits a colony map blob (game/colony's encoding: header,
// terrain of one byte per cell, then things, then pawns) into its
// terrain, its thing records as they are (records) and cut into one
// stream per record field (columns), and the rest (the header, the
// things' count and the pawns).
// ok is false for a blob that is not a map.
func mapParts(blob []byte) (p mapSplit, ok bool) {
	if len(blob) < 13 || string(blob[:4]) != "LHCM" {
		return p, false
	}
	off, bad := 13, false
	uv := func() uint64 {
		v, n := binary.Uvarint(blob[min(off, len(blob)):])
		if n <= 0 {
			bad, off = true, len(blob)
		}
		off += max(n, 0)
		return v
	}
	uv() // id
	w, h := uv(), uv()
	off += 8 // rng
	uv()     // next ID
	uv()     // wild target
	head := off
	if bad || off > len(blob) || w == 0 || w > uint64(len(blob)) || h > uint64(len(blob)) || w*h > uint64(len(blob)-off) {
		return p, false
	}
	p.width = int(w)
	p.terrain = blob[off : off+int(w*h)]
	off += int(w * h)
	count := off
	n := uv()
	start := off
	for range n {
		for f := range thingFields {
			at := off
			uv()
			if bad {
				return p, false
			}
			p.columns[f] = append(p.columns[f], blob[at:off]...)
		}
	}
	if bad {
		return p, false
	}
	p.records = blob[start:off]
	p.rest = append(append(append([]byte{}, blob[:head]...), blob[count:start]...), blob[off:]...)
	return p, true
}

// mapSplit is one map blob in parts.
type mapSplit struct {
	terrain, records, rest []byte
	columns                [thingFields][]byte
	width                  int
}

// thingFields is the number of varints in one thing record.
const thingFields = 9

// whereTheBytesAre compresses the maps' terrain, things and the rest
// apart at level, and the things also as columns, to show which part of
// the world its compressed size comes from.
func whereTheBytesAre(raws [][]byte, level int) error {
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.EncoderLevelFromZstd(level)), zstd.WithEncoderConcurrency(1),
		zstd.WithEncoderCRC(false), zstd.WithWindowSize(1<<20), zstd.WithLowerEncoderMem(true))
	if err != nil {
		return err
	}
	z := func(b []byte) int64 { return int64(len(enc.EncodeAll(b, nil))) }
	var raw, packed [3]int64
	var cols, upSub, upEq int64
	for _, b := range raws {
		p, ok := mapParts(b)
		if !ok {
			continue
		}
		if len(p.terrain)+len(p.records)+len(p.rest) != len(b) {
			return fmt.Errorf("a map blob of %d bytes split into %d+%d+%d: the encoding is not what mapParts reads",
				len(b), len(p.terrain), len(p.records), len(p.rest))
		}
		for i, part := range [][]byte{p.terrain, p.records, p.rest} {
			raw[i] += int64(len(part))
			packed[i] += z(part)
		}
		for _, c := range p.columns {
			cols += z(c)
		}
		sub, eq := upFilters(p.terrain, p.width)
		upSub += z(sub)
		upEq += z(eq)
	}
	fmt.Printf("where the bytes are, zstd:%d, each part of every map compressed apart (MB raw -> MB):\n", level)
	fmt.Printf("  terrain %.1f -> %.3f; things %.1f -> %.3f (as one stream per field: %.3f); header and pawns %.1f -> %.3f\n",
		float64(raw[0])/1e6, float64(packed[0])/1e6, float64(raw[1])/1e6, float64(packed[1])/1e6, float64(cols)/1e6,
		float64(raw[2])/1e6, float64(packed[2])/1e6)
	fmt.Printf("  terrain with each cell minus the one above: %.3f; with 0 where a cell equals the one above: %.3f\n",
		float64(upSub)/1e6, float64(upEq)/1e6)
	return nil
}

// upFilters are two predictions of each terrain cell from the one above
// it (row-major, width w): the difference (PNG's Up filter), and 0 where
// they are equal (the cell's kind, plus one, where not).
func upFilters(t []byte, w int) (sub, eq []byte) {
	sub, eq = make([]byte, len(t)), make([]byte, len(t))
	for i, v := range t {
		above := byte(0)
		if i >= w {
			above = t[i-w]
		}
		sub[i] = v - above
		if i < w || v != above {
			eq[i] = v + 1
		}
	}
	return sub, eq
}
