package join

import (
	"fmt"
	"runtime"
	"time"

	"github.com/lockhost/lockhost/lockstep"
	"github.com/lockhost/lockhost/snapshot"
	"github.com/lockhost/lockhost/wire"
)

// Desync detection and repair, the client's side. Every HashEvery ticks
// (announced in Server_Session) the client hashes its state right after
// the step that reached the tick and reports it. When the host finds a
// difference it sends Server_Resync with the point it cut its state at,
// then the state itself as a world payload. The client simulates up to
// exactly that point (the follower's hold), waits for the payload, swaps
// the maps in (or reloads the world), checks their hashes against the
// host's, and goes on with the ticks it kept receiving meanwhile.

// Resync describes a finished repair, for Config.Resynced.
type Resync struct {
	// Tick is where the state went in; Maps the maps replaced, or Full
	// for the whole world.
	Tick uint64
	Maps []int32
	Full bool
	// Bytes is the size of the repair payload; Wait the time from the
	// Server_Resync to the swap.
	Bytes uint64
	Wait  time.Duration
}

// resyncRecv is a repair being received.
type resyncRecv struct {
	msg   *wire.ServerResync
	recv  *snapshot.Receiver
	blobs []snapshot.Blob // index 0 the world, 1+i map i of the header
	done  bool
	start time.Time
}

// stepped runs after every simulated tick: the checkpoint hashes, once the
// session is live.
func (s *Session) stepped(sim lockstep.Sim) {
	s.traceStep(sim)
	if s.cfg.OnStep != nil {
		s.cfg.OnStep(sim)
	}
	if !s.ready || s.hashEvery == 0 || s.opt.NoHashReports || sim.Tick()%s.hashEvery != 0 {
		return
	}
	cpr := s.checkpointer.Load()
	if cpr == nil {
		// A clone is hashed on the checkpointer's goroutine and its report
		// sent from there; a simulation that cannot clone is hashed here
		// and its report sent after the run.
		cpr = lockstep.NewCheckpointer(false, runtime.GOMAXPROCS(0), func(cp lockstep.Checkpoint) {
			_ = s.sendReport(hashReport(cp)) // a broken connection shows in the reader
		})
		s.checkpointer.Store(cpr)
		select {
		case <-s.closed: // closed meanwhile: Close may have missed it
			cpr.Close()
		default:
		}
	}
	if cp, ok := cpr.Take(sim); ok {
		s.outHashes = append(s.outHashes, hashReport(cp))
	}
	s.keepCheckpoint(sim)
}

func hashReport(cp lockstep.Checkpoint) *wire.ClientHashes {
	r := &wire.ClientHashes{Tick: cp.Tick, World: cp.World, Maps: make([]wire.MapHash, len(cp.Maps))}
	for i, m := range cp.Maps {
		r.Maps[i] = wire.MapHash{MapID: m.ID, Hash: m.Hash, Parts: m.Parts}
	}
	return r
}

// flushHashes sends the reports taken since the last call.
func (s *Session) flushHashes() error {
	for _, r := range s.outHashes {
		if err := s.sendReport(r); err != nil {
			return err
		}
	}
	clear(s.outHashes)
	s.outHashes = s.outHashes[:0]
	return nil
}

// startResync begins a repair: the follower stops at the host's cut.
func (s *Session) startResync(m *wire.ServerResync) error {
	if s.resync != nil {
		return protoErr("a second Server_Resync before the first finished")
	}
	if s.cfg.Light {
		return protoErr("Server_Resync to a light client")
	}
	if err := s.follower.HoldAt(m.Tick, m.Applied); err != nil {
		return protoErr("Server_Resync: %w", err)
	}
	rs := &resyncRecv{msg: m, start: time.Now()}
	rs.recv = snapshot.NewReceiver(s.cfg.MaxPayload, func(i int, b snapshot.Blob) error {
		if err := s.limits().CheckBlob(i, b.RawSize); err != nil {
			return err
		}
		rs.blobs = append(rs.blobs, b)
		return nil
	})
	s.resync = rs
	s.cfg.Logger.Debug("repair announced", "tick", m.Tick, "applied", m.Applied, "maps", m.Maps, "full", m.Full)
	return nil
}

// resyncData takes one chunk of the repair payload.
func (s *Session) resyncData(d *wire.ServerWorldData) error {
	rs := s.resync
	if rs == nil || rs.done {
		return protoErr("unexpected %s", d.ID())
	}
	done, err := rs.recv.Add(d.Offset, d.Total, d.Data)
	if err != nil {
		return protoErr("repair data: %w", err)
	}
	rs.done = done
	return nil
}

// finishResync swaps the repair in once it is complete and the simulation
// has reached its point.
func (s *Session) finishResync() error {
	rs := s.resync
	if rs == nil || !rs.done || !s.follower.Held() {
		return nil
	}
	h := rs.recv.Header()
	if h.Tick != rs.msg.Tick {
		return protoErr("repair payload at tick %d, announced for %d", h.Tick, rs.msg.Tick)
	}
	if err := s.swapIn(rs, h); err != nil {
		return err
	}
	s.follower.Release()
	s.resync = nil
	info := Resync{Tick: h.Tick, Maps: rs.msg.Maps, Full: rs.msg.Full, Bytes: rs.recv.Total(), Wait: time.Since(rs.start)}
	s.cfg.Logger.Debug("repair swapped in", "tick", info.Tick, "maps", info.Maps, "full", info.Full, "bytes", info.Bytes, "wait", info.Wait)
	// The callback runs before the host hears of the repair, so anything
	// the host says about it afterwards comes after the callback too.
	if s.cfg.Resynced != nil {
		s.cfg.Resynced(info)
	}
	return s.write(&wire.ClientResynced{Tick: h.Tick, World: s.follower.Sim().WorldHash()})
}

// swapIn inflates the repair and puts it in the simulation. Each blob's
// raw size is checked against MaxRaw as it arrives; the repair's raw
// bytes in all against MaxRawTotal as they are inflated here.
func (s *Session) swapIn(rs *resyncRecv, h *snapshot.Header) error {
	if len(rs.blobs) != 1+len(h.Maps) {
		return protoErr("repair payload with %d blobs for %d maps", len(rs.blobs), len(h.Maps))
	}
	inflate := (&snapshot.Parsed{Header: *h, World: rs.blobs[0], Maps: rs.blobs[1:]}).Inflate
	if rs.msg.Full {
		sim, err := h.LoadBlobs(s.limits(), inflate, s.cfg.Loader, s.mapLoader())
		if err != nil {
			return protoErr("repair: %w", err)
		}
		if err := s.follower.ReplaceSim(sim); err != nil {
			return protoErr("repair: %w", err)
		}
		return nil
	}
	return s.replaceMaps(rs, h, inflate)
}

// replaceMaps swaps the repaired maps into the running simulation, one at
// a time, and checks each against the host's hash.
func (s *Session) replaceMaps(rs *resyncRecv, h *snapshot.Header, inflate func(int, int64) ([]byte, error)) error {
	sim := s.follower.Sim()
	rp, ok := sim.(lockstep.MapReplacer)
	if !ok {
		return fmt.Errorf("the host repairs single maps but this game cannot replace one (lockstep.MapReplacer)")
	}
	if len(h.Maps) != len(rs.msg.Maps) {
		return protoErr("repair payload of %d maps, %d announced", len(h.Maps), len(rs.msg.Maps))
	}
	lim := s.limits()
	var total uint64
	for i, mi := range h.Maps {
		if mi.ID != rs.msg.Maps[i] {
			return protoErr("repair payload has map %d where map %d was announced", mi.ID, rs.msg.Maps[i])
		}
		raw, err := inflate(1+i, lim.MaxRaw)
		if err == nil {
			total += uint64(len(raw))
			err = lim.CheckTotal(total)
		}
		if err != nil {
			return protoErr("repair: %w", err)
		}
		if err := rp.ReplaceMap(lockstep.MapBlob{ID: mi.ID, Data: raw}); err != nil {
			return protoErr("repair map %d: %w", mi.ID, err)
		}
		if got, _ := sim.MapHash(mi.ID); got != mi.StateHash {
			return protoErr("repaired map %d hashes %016x, the host's %016x", mi.ID, got, mi.StateHash)
		}
	}
	return nil
}

// limits are the raw-size limits of loads and repairs.
func (s *Session) limits() snapshot.Limits {
	return snapshot.Limits{MaxRaw: s.cfg.MaxRaw, MaxRawTotal: s.cfg.MaxRawTotal}
}

// mapLoader is the MapLoader a full repair loads with: none when a Loader
// is configured, which takes precedence there.
func (s *Session) mapLoader() lockstep.MapLoader {
	if s.cfg.Loader != nil {
		return nil
	}
	return s.cfg.MapLoader
}
