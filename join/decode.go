package join

import (
	"fmt"
	"runtime"
	"sync"

	"github.com/lockhost/lockhost/snapshot"
)

// decoder inflates blobs as the download hands them over, on up to
// GOMAXPROCS goroutines, so decompression overlaps the download. Each
// compressed blob is dropped as soon as it is inflated.
type decoder struct {
	maxRaw      int64
	maxRawTotal uint64
	sem         chan struct{}
	wg          sync.WaitGroup

	mu       sync.Mutex
	raw      [][]byte // world, then maps in header order
	err      error
	declared uint64
}

func newDecoder(cfg Config) *decoder {
	return &decoder{maxRaw: cfg.MaxRaw, maxRawTotal: cfg.MaxRawTotal, sem: make(chan struct{}, runtime.GOMAXPROCS(0))}
}

// blob is the receiver's callback: check the declared size, then inflate
// in the background.
func (d *decoder) blob(i int, b snapshot.Blob) error {
	d.mu.Lock()
	if b.RawSize > uint64(d.maxRaw) {
		d.mu.Unlock()
		return fmt.Errorf("blob %d declares %d raw bytes, over the limit of %d: %w", i, b.RawSize, d.maxRaw, snapshot.ErrTooLarge)
	}
	d.declared += b.RawSize
	if d.declared > d.maxRawTotal {
		d.mu.Unlock()
		return fmt.Errorf("world declares over %d raw bytes: %w", d.maxRawTotal, snapshot.ErrTooLarge)
	}
	for len(d.raw) <= i {
		d.raw = append(d.raw, nil)
	}
	err := d.err
	d.mu.Unlock()
	if err != nil {
		return err
	}
	d.sem <- struct{}{}
	d.wg.Add(1)
	go func() {
		defer d.wg.Done()
		defer func() { <-d.sem }()
		raw, err := snapshot.Decompress(b, d.maxRaw)
		d.mu.Lock()
		defer d.mu.Unlock()
		if err != nil {
			if d.err == nil {
				d.err = fmt.Errorf("blob %d: %w", i, err)
			}
			return
		}
		d.raw[i] = raw
	}()
	return nil
}

// failed reports the first inflate error so far.
func (d *decoder) failed() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.err
}

// wait waits for every blob and returns the world and the maps.
func (d *decoder) wait() (world []byte, maps [][]byte, err error) {
	d.wg.Wait()
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.err != nil {
		return nil, nil, d.err
	}
	if len(d.raw) == 0 {
		return nil, nil, fmt.Errorf("no world blob")
	}
	return d.raw[0], d.raw[1:], nil
}

// stop waits for inflating goroutines still running (after an error).
func (d *decoder) stop() { d.wg.Wait() }
