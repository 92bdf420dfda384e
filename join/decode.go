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
// the raw maps are kept for the Loader at the end. Limits and loading are
// snapshot's (snapshot.Limits, snapshot.Assembly); the decoder only adds
// the concurrency.
type decoder struct {
	lim       snapshot.Limits
	loader    lockstep.Loader
	mapLoader lockstep.MapLoader
	header    *snapshot.Header
	sem       chan struct{}
	wg        sync.WaitGroup

	mu       sync.Mutex
	err      error
	declared uint64
	got      map[int]bool // blobs handed over so far
	taken    bool         // finish ran: the simulation is out

	// raws are inflated maps' buffers, free for the next map: with a
	// MapLoader each map is loaded (copied) before its buffer is reused,
	// so the joiner touches GOMAXPROCS maps' worth of fresh memory for
	// the raw bytes, not the whole world's. Fresh memory is what a join
	// pays most for after the CPU: the kernel (and, in a virtual machine,
	// the hypervisor) backs every new page on its first touch.
	raws      chan []byte
	worldDone chan struct{}      // closed once the world is inflated (and begun)
	asm       *snapshot.Assembly // set with the world blob's arrival
	asmMu     sync.Mutex         // Assembly calls are not concurrent (but maps, when it says so)
	sections  *sectionMaker      // the sections to splice into maps sent without them
}

// newDecoder returns the decoder of the payload header describes.
func newDecoder(cfg Config, header *snapshot.Header) *decoder {
	return &decoder{lim: snapshot.Limits{MaxRaw: cfg.MaxRaw, MaxRawTotal: cfg.MaxRawTotal},
		loader: cfg.Loader, mapLoader: cfg.MapLoader, header: header,
		sem: make(chan struct{}, runtime.GOMAXPROCS(0)), raws: make(chan []byte, runtime.GOMAXPROCS(0)),
		worldDone: make(chan struct{})}
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
	if err := d.declare(i, b.RawSize); err != nil {
		return err
	}
	d.mu.Lock()
	if d.got == nil {
		d.got = map[int]bool{}
	}
	d.got[i] = true
	d.mu.Unlock()
	// A slot is held from inflating until the raw bytes are handed on, so
	// at most GOMAXPROCS raw maps are alive however fast inflating is.
	d.sem <- struct{}{}
	d.wg.Add(1)
	go func() {
		defer d.wg.Done()
		defer func() { <-d.sem }()
		var buf []byte
		if i > 0 && d.mapLoader != nil {
			buf = d.freeRaw()
		}
		raw, err := snapshot.DecompressInto(buf, b, d.lim.MaxRaw)
		if err == nil && i > 0 {
			raw, err = d.splice(i-1, raw)
		}
		if err != nil {
			d.fail(fmt.Errorf("blob %d: %w", i, err))
		}
		if i == 0 {
			if err == nil {
				d.asmMu.Lock()
				d.add(d.asm.World(raw))
				d.asmMu.Unlock()
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

// splice puts back the section of map i when the host sent it without.
func (d *decoder) splice(i int, raw []byte) ([]byte, error) {
	m := d.header.Maps[i]
	if m.Cut == nil {
		return raw, nil
	}
	sec := d.sections.section(m.ID)
	if sec == nil {
		return nil, fmt.Errorf("map %d sent without a section this client made", m.ID)
	}
	return snapshot.Splice(raw, *m.Cut, sec)
}

// declare checks blob i's declared raw size, alone and with the blobs
// before it, against the limits before anything is inflated, and starts
// the assembly with the world blob.
func (d *decoder) declare(i int, raw uint64) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if i > 0 && i <= len(d.header.Maps) && d.header.Maps[i-1].Cut != nil {
		raw += uint64(len(d.sections.section(d.header.Maps[i-1].ID)))
	}
	if err := d.lim.CheckBlob(i, raw); err != nil {
		return err
	}
	d.declared += raw
	if err := d.lim.CheckTotal(d.declared); err != nil {
		return fmt.Errorf("world declares %w", err)
	}
	if i == 0 {
		asm, err := d.header.Assemble(d.loader, d.mapLoader)
		if err != nil {
			return err
		}
		d.asm = asm
	}
	return d.err
}

// add records the error of an assembly step, if any.
func (d *decoder) add(err error) {
	if err != nil {
		d.fail(err)
	}
}

func (d *decoder) addMap(i int, raw []byte) {
	if d.mapLoader == nil {
		d.asmMu.Lock()
		defer d.asmMu.Unlock()
		d.add(d.asm.Map(i, raw)) // kept until Finish
		return
	}
	defer d.reuseRaw(raw)
	<-d.worldDone // a MapLoader takes maps only after the world
	if d.failed() != nil {
		return // the world failed; its error is recorded
	}
	if !d.asm.Concurrent() { // else maps load on every core at once
		d.asmMu.Lock()
		defer d.asmMu.Unlock()
	}
	d.add(d.asm.MapCopy(i, raw))
}

// freeRaw returns an inflated map's buffer that is free again, or nil.
func (d *decoder) freeRaw() []byte {
	select {
	case b := <-d.raws:
		return b
	default:
		return nil
	}
}

// reuseRaw keeps a loaded map's buffer for the next map, unless enough
// are kept already.
func (d *decoder) reuseRaw(b []byte) {
	select {
	case d.raws <- b[:0]:
	default:
	}
}

// has reports whether blob i was handed over already.
func (d *decoder) has(i int) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.got[i]
}

// reusable reports whether a later attempt may go on with this decoder:
// it has the world, nothing failed and its simulation was not taken.
func (d *decoder) reusable() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.err == nil && !d.taken && d.got[0]
}

// failed reports the first error so far.
func (d *decoder) failed() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.err
}

// finish waits for every blob and returns the loaded simulation, checked
// against the header.
func (d *decoder) finish() (lockstep.Sim, error) {
	d.wg.Wait()
	d.mu.Lock()
	d.taken = true
	d.mu.Unlock()
	if err := d.failed(); err != nil {
		return nil, err
	}
	if d.asm == nil {
		return nil, errors.New("no world blob")
	}
	return d.asm.Finish()
}

// stop waits for inflating goroutines still running (after an error).
func (d *decoder) stop() { d.wg.Wait() }
