package join

import (
	"errors"
	"fmt"
	"runtime"
	"sync"

	"github.com/lockhost/lockhost/lockstep"
	"github.com/lockhost/lockhost/snapshot"
)

// decoder inflates blobs as the download hands them over, on up to
// GOMAXPROCS goroutines, so decompression overlaps the download. Each
// compressed blob is dropped as soon as it is inflated. With a
// lockstep.MapLoader each inflated map is loaded at once and its raw bytes
// dropped too, so the joiner holds about one copy of the world; otherwise
// the raw maps are kept for the Loader at the end.
type decoder struct {
	maxRaw      int64
	maxRawTotal uint64
	mapLoader   lockstep.MapLoader
	header      func() *snapshot.Header
	sem         chan struct{}
	wg          sync.WaitGroup

	mu       sync.Mutex
	err      error
	declared uint64
	world    []byte
	raw      [][]byte // maps in header order, without a MapLoader

	worldDone chan struct{}        // closed once the world is inflated (and begun)
	asm       lockstep.MapAssembly // with a MapLoader, after the world
	asmMu     sync.Mutex           // AddMap calls are not concurrent
}

func newDecoder(cfg Config, header func() *snapshot.Header) *decoder {
	return &decoder{maxRaw: cfg.MaxRaw, maxRawTotal: cfg.MaxRawTotal, mapLoader: cfg.MapLoader, header: header,
		sem: make(chan struct{}, runtime.GOMAXPROCS(0)), worldDone: make(chan struct{})}
}

func (d *decoder) fail(err error) {
	d.mu.Lock()
	if d.err == nil {
		d.err = err
	}
	d.mu.Unlock()
}

// blob is the receiver's callback (index 0 is the world, 1+i map i): check
// the declared size, then inflate in the background.
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
	if i == 0 && d.mapLoader == nil {
		d.raw = make([][]byte, len(d.header().Maps))
	}
	err := d.err
	d.mu.Unlock()
	if err != nil {
		return err
	}
	// A slot is held from inflating until the raw bytes are handed on, so
	// at most GOMAXPROCS raw maps are alive however fast inflating is.
	d.sem <- struct{}{}
	d.wg.Add(1)
	go func() {
		defer d.wg.Done()
		defer func() { <-d.sem }()
		raw, err := snapshot.Decompress(b, d.maxRaw)
		if err != nil {
			d.fail(fmt.Errorf("blob %d: %w", i, err))
		}
		if i == 0 {
			if err == nil {
				d.begin(raw)
			}
			close(d.worldDone)
			return
		}
		if err == nil {
			d.addMap(i-1, raw)
		}
	}()
	return nil
}

func (d *decoder) begin(world []byte) {
	if d.mapLoader == nil {
		d.mu.Lock()
		d.world = world
		d.mu.Unlock()
		return
	}
	asm, err := d.mapLoader.Begin(world, len(d.header().Maps))
	if err != nil {
		d.fail(fmt.Errorf("load: %w", err))
		return
	}
	d.asm = asm
}

func (d *decoder) addMap(i int, raw []byte) {
	if d.mapLoader == nil {
		d.mu.Lock()
		d.raw[i] = raw
		d.mu.Unlock()
		return
	}
	<-d.worldDone
	if d.asm == nil {
		return // the world failed; its error is recorded
	}
	d.asmMu.Lock()
	defer d.asmMu.Unlock()
	if err := d.asm.AddMap(lockstep.MapBlob{ID: d.header().Maps[i].ID, Data: raw}); err != nil {
		d.fail(fmt.Errorf("load map %d: %w", d.header().Maps[i].ID, err))
	}
}

// failed reports the first error so far.
func (d *decoder) failed() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.err
}

// finish waits for every blob and returns the loaded simulation, checked
// against the header.
func (d *decoder) finish(loader lockstep.Loader) (lockstep.Sim, error) {
	d.wg.Wait()
	if err := d.failed(); err != nil {
		return nil, err
	}
	h := d.header()
	if d.mapLoader != nil {
		if d.asm == nil {
			return nil, errors.New("no world blob")
		}
		sim, err := d.asm.Finish()
		if err != nil {
			return nil, fmt.Errorf("load: %w", err)
		}
		if err := h.Verify(sim); err != nil {
			return nil, err
		}
		return sim, nil
	}
	if d.world == nil {
		return nil, errors.New("no world blob")
	}
	return h.Load(loader, d.world, d.raw)
}

// stop waits for inflating goroutines still running (after an error).
func (d *decoder) stop() { d.wg.Wait() }
