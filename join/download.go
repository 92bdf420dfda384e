package join

import (
	"context"
	"fmt"
	"time"

	"github.com/lockhost/lockhost/lockstep"
	"github.com/lockhost/lockhost/snapshot"
	"github.com/lockhost/lockhost/wire"
)

// The download phase: the join point arrives as Server_WorldData chunks,
// each acknowledged with Client_Ack; blobs are inflated (and, with a
// MapLoader, loaded) as they complete, on the decoder's goroutines. Live
// ticks that arrive meanwhile are kept for the catch-up. The phase ends
// with the world loaded.

// lostGrace is how long a download whose acknowledgement failed goes on
// reading what already arrived.
const lostGrace = 2 * time.Second

// download is the state of the download phase.
type download struct {
	s     *Session
	recv  *snapshot.Receiver
	dec   *decoder           // chosen once, when the header arrives
	ticks []*wire.ServerTick // live ticks that arrive before the world is loaded
	lost  error              // an acknowledgement that could not be sent
	done  bool               // the whole payload arrived
	ph    *phase
}

// loaded is what the download hands the catch-up: the world, the
// header it came with, the ticks that arrived meanwhile and when loading
// began.
type loaded struct {
	sim    lockstep.Sim
	header *snapshot.Header
	ticks  []*wire.ServerTick
	start  time.Time
}

func (s *Session) newDownload() *download {
	d := &download{s: s}
	d.recv = snapshot.NewReceiver(s.cfg.MaxPayload, d.blob)
	d.recv.OnHeader(d.header)
	d.recv.OnHeld(d.held)
	d.ph = s.afterHandshake("unexpected %s while downloading", map[wire.ID]handler{
		wire.IDServerWorldData: on(d.data),
		wire.IDServerTick:      on(func(t *wire.ServerTick) error { d.ticks = append(d.ticks, t); return nil }),
		// Relay mode: a new session asks its first arbiter for the world
		// instead of sending one (arbiter.go).
		wire.IDServerUploadRequest: on(d.worldRequested),
	})
	return d
}

// download runs the download phase and loads the world.
func (s *Session) download(ctx context.Context) (*loaded, error) {
	dl := time.Now()
	d := s.newDownload()
	defer func() {
		if d.dec != nil {
			d.dec.stop()
		}
		s.sections.drop()
	}()
	if err := d.receive(ctx); err != nil {
		return nil, err
	}
	s.timings.Download = time.Since(dl)
	s.timings.Bytes = d.recv.Total()

	report(s.cfg, PhaseLoad, 0, 0)
	ld := time.Now()
	if d.dec == nil {
		return nil, protoErr("world data: no world blob")
	}
	sim, err := d.dec.finish()
	s.sections.drop()
	if s.cfg.Resume != nil {
		s.cfg.Resume.finished()
	}
	if err != nil {
		return nil, protoErr("world data: %w", err)
	}
	header := d.recv.Header()
	s.tokenMu.Lock()
	s.info.Faction = header.Faction
	s.tokenMu.Unlock()
	s.timings.RawBytes = header.RawSize()
	s.timings.Codec = header.World.Codec
	for _, m := range header.Maps {
		if m.Cut != nil {
			s.timings.Thin++
		}
	}
	return &loaded{sim: sim, header: header, ticks: d.ticks, start: ld}, nil
}

// receive takes packets until the whole payload has arrived. When an
// acknowledgement cannot be sent, the connection is gone, but what
// arrived before is still taken (a resume will not ask for it again)
// until the reading side ends too. The download phase is reported with
// the first chunk: until then the host may still refuse the username.
func (d *download) receive(ctx context.Context) error {
	for !d.done {
		if d.s.replayedRejoin() {
			return errReplayed
		}
		p, err := d.s.recv(ctx)
		if err != nil {
			if d.lost != nil && ctx.Err() == nil {
				return d.lost
			}
			return err
		}
		if err := d.ph.handle(p); err != nil {
			return err
		}
	}
	return d.lost
}

// data takes one chunk of the payload and acknowledges it.
func (d *download) data(p *wire.ServerWorldData) error {
	done, err := d.recv.Add(p.Offset, p.Total, p.Data)
	if err != nil {
		return protoErr("world data: %w", err)
	}
	d.done = done
	if d.dec != nil {
		if err := d.dec.failed(); err != nil {
			return protoErr("world data: %w", err)
		}
	}
	if d.lost == nil {
		if d.lost = d.s.write(&wire.ClientAck{Received: d.recv.Received()}); d.lost != nil {
			// What the link delivered is read at once; a link that is
			// merely stuck is not waited for.
			_ = d.s.nc.SetReadDeadline(time.Now().Add(lostGrace))
		}
	}
	report(d.s.cfg, PhaseDownload, d.recv.Received(), d.recv.Total())
	return nil
}

// header chooses the decoder the blobs go to, once the header says what
// is coming: with a Resume, the decoder of the last attempt when it was
// assembling the same join point, else a new one.
func (d *download) header(h *snapshot.Header) error {
	if f := d.s.cfg.PrepareMemory; f != nil {
		f(min(h.RawSize(), d.s.cfg.MaxRawTotal), min(d.recv.Total(), d.s.cfg.MaxPayload))
	}
	for _, m := range h.Maps {
		if m.Cut != nil && d.s.sections.section(m.ID) == nil {
			return protoErr("world data: map %d sent without a section this client named", m.ID)
		}
	}
	mk := func() *decoder { dec := newDecoder(d.s.cfg, h); dec.sections = d.s.sections; return dec }
	if res := d.s.cfg.Resume; res != nil {
		d.dec = res.decoderFor(h, mk)
		// A decoder of the attempt before (stopped) splices this
		// attempt's sections from now on: that attempt's are dropped.
		d.dec.sections = d.s.sections
	} else {
		d.dec = mk()
	}
	return nil
}

// blob hands a downloaded blob to the decoder (and the Resume keeps it),
// unless the attempt before loaded it already.
func (d *download) blob(i int, b snapshot.Blob) error {
	if res := d.s.cfg.Resume; res != nil {
		res.keep(i, b)
		if d.dec.has(i) {
			return nil
		}
	}
	return d.dec.blob(i, b)
}

// held hands the decoder a blob the host left out, from those the
// Resume kept.
func (d *download) held(i int, info snapshot.BlobInfo) error {
	res := d.s.cfg.Resume
	if res == nil {
		return fmt.Errorf("the host left out blob %d, but this join holds nothing", i)
	}
	return res.held(d.dec, i, info)
}
