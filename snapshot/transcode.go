package snapshot

import (
	"fmt"
	"runtime"
	"sync"
)

// Transcode returns p with every blob recompressed with c, maps in
// parallel on up to workers goroutines (0 means GOMAXPROCS), each holding
// one raw blob at a time: the same join point for joiners that do not read
// p's codec, made without the state p was built from. Blobs already of
// c's codec are shared, not copied.
func Transcode(p *Point, c Compression, workers int) (*Point, error) {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	out := &Point{Tick: p.Tick, WorldHash: p.WorldHash, Maps: make([]MapPoint, len(p.Maps))}
	var err error
	if out.World, err = recompress(p.World, c); err != nil {
		return nil, fmt.Errorf("world: %w", err)
	}
	errs := make([]error, len(p.Maps))
	work := make(chan int)
	var wg sync.WaitGroup
	for range min(workers, len(p.Maps)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				m := p.Maps[i]
				m.Blob, errs[i] = recompress(m.Blob, c)
				out.Maps[i] = m
			}
		}()
	}
	for i := range p.Maps {
		work <- i
	}
	close(work)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			return nil, fmt.Errorf("map %d: %w", p.Maps[i].ID, err)
		}
	}
	out.Compressed = 1 + len(p.Maps)
	return out, nil
}

// recompress is b with c's codec: b itself when it already is.
func recompress(b Blob, c Compression) (Blob, error) {
	if b.Codec == c.Codec {
		return b, nil
	}
	raw, err := Decompress(b, 0)
	if err != nil {
		return Blob{}, err
	}
	return Compress(raw, c)
}
