package join_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/lockhost/lockhost/join"
	"github.com/lockhost/lockhost/lockstep"
	"github.com/lockhost/lockhost/lockstep/locksteptest"
	"github.com/lockhost/lockhost/snapshot"
	"github.com/lockhost/lockhost/testing/testkit"
	"github.com/lockhost/lockhost/wire"
)

// chunk is the world data chunk size of these tests: small, so that a
// world of a few hundred bytes comes in many chunks.
const chunk = 64

// errNetwork stands for the connection ending or failing (EOF, a reset, a
// broken pipe), whichever the client sees first.
var errNetwork = errors.New("the connection ended")

// TestBadWorlds: a truncated, oversized or damaged world ends the join
// with an error that says why, before anything past a limit is inflated;
// a world exactly at every limit loads.
func TestBadWorlds(t *testing.T) {
	w := newWorld(t, 3, 0)
	total := uint64(len(w.payload))
	damaged := func(at int) []byte {
		b := bytes.Clone(w.payload)
		b[at] ^= 0xff
		return b
	}
	firstMapRaw := int64(w.header.Maps[0].Blob.RawSize)
	for _, tc := range []struct {
		name string
		cfg  join.Config
		send func(h *fakeHost) error
		want error  // errors.Is target; nil: join succeeds
		says string // and the error says this
	}{
		{"at every limit", join.Config{MaxPayload: total, MaxRawTotal: w.header.RawSize()}, func(h *fakeHost) error {
			return h.sendWorld(w.payload, total, chunk)
		}, nil, ""},
		{"truncated, then the host hangs up", join.Config{}, func(h *fakeHost) error {
			if err := h.sendWorld(w.payload[:len(w.payload)/2], total, chunk); err != nil {
				return err
			}
			return h.nc.Close()
		}, errNetwork, ""},
		{"total over MaxPayload", join.Config{MaxPayload: total - 1}, func(h *fakeHost) error {
			return h.sendWorld(w.payload, total, chunk)
		}, snapshot.ErrTooLarge, "over limit"},
		{"a map over MaxRaw", join.Config{MaxRaw: firstMapRaw - 1}, func(h *fakeHost) error {
			return h.sendWorld(w.payload, total, chunk)
		}, snapshot.ErrTooLarge, "declares"},
		{"the world over MaxRawTotal", join.Config{MaxRawTotal: w.header.RawSize() - 1}, func(h *fakeHost) error {
			return h.sendWorld(w.payload, total, chunk)
		}, snapshot.ErrTooLarge, "world declares"},
		{"total larger than the blobs", join.Config{}, func(h *fakeHost) error {
			return h.sendWorld(w.payload, total+100, 1000)
		}, snapshot.ErrMalformed, "blobs take"},
		{"chunks disagree on the total", join.Config{}, func(h *fakeHost) error {
			if err := h.sendWorld(w.payload[:chunk], total, chunk); err != nil {
				return err
			}
			return h.send(&wire.ServerWorldData{Offset: chunk, Total: total + 1, Data: w.payload[chunk : 2*chunk]})
		}, snapshot.ErrMalformed, "first said"},
		{"a blob fails its hash", join.Config{}, func(h *fakeHost) error {
			return h.sendWorld(damaged(len(w.payload)-10), total, chunk)
		}, nil, "hash mismatch"},
		{"the header fails its hash", join.Config{}, func(h *fakeHost) error {
			return h.sendWorld(damaged(14), total, chunk)
		}, snapshot.ErrMalformed, "header hash"},
	} {
		for _, tr := range transports {
			t.Run(tc.name+"/"+tr.name, func(t *testing.T) {
				s, script, err := run(t, tr, tc.cfg, func(h *fakeHost) error {
					if _, err := h.handshake(); err != nil {
						return err
					}
					// The client may hang up in the middle: its error is
					// what is checked.
					_ = tc.send(h)
					return h.waitClosed()
				})
				if tc.want == nil && tc.says == "" {
					if err != nil {
						t.Fatalf("join at the limits: %v", err)
					}
					if s.Sim().WorldHash() != w.ready.WorldHash() {
						t.Fatal("loaded a different world")
					}
					s.Close()
					scriptOK(t, script)
					return
				}
				scriptOK(t, script)
				if err == nil {
					t.Fatal("join succeeded")
				}
				if tc.want == errNetwork {
					if !errors.Is(err, io.EOF) && !errors.Is(err, syscall.EPIPE) && !errors.Is(err, syscall.ECONNRESET) && !errors.Is(err, io.ErrClosedPipe) {
						t.Fatalf("join: %v, want the connection's end or failure", err)
					}
				} else if tc.want != nil && !errors.Is(err, tc.want) {
					t.Fatalf("join: %v, want %v", err, tc.want)
				}
				if !strings.Contains(err.Error(), tc.says) {
					t.Fatalf("join: %v, want it to say %q", err, tc.says)
				}
				var re *join.RejectedError
				if errors.As(err, &re) {
					t.Fatalf("a bad world reads as a refusal: %v", err)
				}
			})
		}
	}
}

// progressLog records progress reports from any goroutine.
type progressLog struct {
	mu   sync.Mutex
	list []join.Progress
}

func (p *progressLog) add(pr join.Progress) {
	p.mu.Lock()
	p.list = append(p.list, pr)
	p.mu.Unlock()
}

// TestDownloadAndCatchUp: a join point behind the host's grant, with live
// ticks arriving during the download, is loaded with either loader and
// simulated up to the grant; WorldReady says that tick and the world's
// hash there; every chunk is acknowledged; progress goes through the
// phases in order with the right totals; the timings add up.
func TestDownloadAndCatchUp(t *testing.T) {
	const ahead = 40
	for _, loader := range []string{"loader", "map loader"} {
		for _, tr := range transports {
			t.Run(loader+"/"+tr.name, func(t *testing.T) {
				w := newWorld(t, 3, ahead)
				total := uint64(len(w.payload))
				// A command at the last granted tick, announced while the
				// world is still coming, and a grant 10 ticks further.
				cmd := locksteptest.Counters{}.AddCommand(1, 5)
				cmd.Tick, cmd.Player = w.granted, 7
				live := &wire.ServerTick{Tick: w.granted, Commands: []lockstep.Command{cmd}, Granted: w.granted + 10}
				want := counters(t, 3)
				for want.Tick() < w.granted {
					want.Step()
				}
				if err := want.Apply(cmd); err != nil {
					t.Fatal(err)
				}
				for want.Tick() < w.granted+10 {
					want.Step()
				}

				var progress progressLog
				var applied []lockstep.Command
				cfg := join.Config{Progress: progress.add, OnApply: func(c lockstep.Command) { applied = append(applied, c) }}
				var prepared [][2]uint64
				cfg.PrepareMemory = func(raw, payload uint64) { prepared = append(prepared, [2]uint64{raw, payload}) }
				if loader == "map loader" {
					cfg.MapLoader = locksteptest.MapLoader
				}
				var acks []uint64
				var ready *wire.ClientWorldReady
				s, script, err := run(t, tr, cfg, func(h *fakeHost) error {
					if _, err := h.handshake(); err != nil {
						return err
					}
					if err := h.sendWorld(w.payload[:4*chunk], total, chunk); err != nil {
						return err
					}
					if err := h.send(live); err != nil {
						return err
					}
					if err := h.sendWorldFrom(4*chunk, w.payload[4*chunk:], total, chunk); err != nil {
						return err
					}
					for {
						p, err := h.next()
						if err != nil {
							return err
						}
						switch p := p.(type) {
						case *wire.ClientAck:
							acks = append(acks, p.Received)
						case *wire.ClientWorldReady:
							ready = p
							return nil
						}
					}
				})
				if err != nil {
					t.Fatal(err)
				}
				scriptOK(t, script)
				if ready.Tick != w.granted+10 || ready.WorldHash != want.WorldHash() {
					t.Fatalf("WorldReady at tick %d hash %x, want %d %x", ready.Tick, ready.WorldHash, w.granted+10, want.WorldHash())
				}
				if s.Tick() != ready.Tick || len(applied) != 1 || applied[0].Tick != w.granted {
					t.Fatalf("session at tick %d with %d commands applied, want %d and the live command", s.Tick(), len(applied), ready.Tick)
				}
				wantAcks := []uint64{}
				for off := uint64(chunk); off < total; off += chunk {
					wantAcks = append(wantAcks, off)
				}
				wantAcks = append(wantAcks, total)
				if !slices.Equal(acks, wantAcks) {
					t.Fatalf("acknowledged %v, want every chunk's end %v", acks, wantAcks)
				}
				tm := s.Timings()
				if tm.Bytes != total || tm.RawBytes != w.header.RawSize() || tm.SnapshotTick != w.tick ||
					tm.ReadyTick != ready.Tick || tm.CatchUpTicks != ready.Tick-w.tick {
					t.Fatalf("timings %+v: bytes %d raw %d, ticks %d to %d", tm, total, w.header.RawSize(), w.tick, ready.Tick)
				}
				checkProgress(t, progress.list, total, ready.Tick-w.tick)
				if want := [][2]uint64{{w.header.RawSize(), total}}; !slices.Equal(prepared, want) {
					t.Fatalf("PrepareMemory called with %v, want once with the raw and payload sizes %v", prepared, want)
				}
			})
		}
	}
}

// checkProgress checks that reports go through the phases in order,
// that download reports count up to the payload's size, and that the
// last catch-up report has simulated every tick.
func checkProgress(t *testing.T, list []join.Progress, total, ticks uint64) {
	t.Helper()
	order := []join.Phase{join.PhaseConnect, join.PhaseHandshake, join.PhaseDownload, join.PhaseLoad, join.PhaseCatchUp}
	var phases []join.Phase
	var lastDone uint64
	for _, p := range list {
		if len(phases) == 0 || phases[len(phases)-1] != p.Phase {
			phases = append(phases, p.Phase)
			lastDone = 0
		}
		if p.Done < lastDone {
			t.Fatalf("%s progress went back from %d to %d", p.Phase, lastDone, p.Done)
		}
		lastDone = p.Done
	}
	if !slices.Equal(phases, order) {
		t.Fatalf("phases %v, want %v", phases, order)
	}
	var lastDL, lastCU join.Progress
	for _, p := range list {
		switch p.Phase {
		case join.PhaseDownload:
			lastDL = p
		case join.PhaseCatchUp:
			lastCU = p
		}
	}
	if lastDL.Done != total || lastDL.Total != total {
		t.Fatalf("last download report %+v, want %d of %d", lastDL, total, total)
	}
	if lastCU.Done != ticks || lastCU.Total != ticks {
		t.Fatalf("last catch-up report %+v, want %d of %d ticks", lastCU, ticks, ticks)
	}
}

// TestCutMidDownload: a connection cut by the network after exactly n
// bytes of the download (testkit.Relay between the client and the host)
// ends the join with a network error, not a refusal or a protocol error,
// and the client has acknowledged no more than it got.
func TestCutMidDownload(t *testing.T) {
	w := newWorld(t, 3, 0)
	total := uint64(len(w.payload))
	_, hostAddr, ends := tcpTransport(t)
	relay := testkit.StartRelay(t, hostAddr)
	// The handshake's packets come first; cut 5 chunks into the world.
	hs := len(wire.MustMarshal(greeting.modList)) + len(wire.MustMarshal(greeting.defsOK))
	frame := len(wire.MustMarshal(&wire.ServerWorldData{Offset: 0, Total: total, Data: w.payload[:chunk]}))
	cut := int64(hs + 5*frame + frame/2)
	relay.CutAfter(0, cut)
	var acked uint64
	_, script, err := runCtx(t, context.Background(), relay.Addr(), ends, join.Config{}, func(h *fakeHost) error {
		if _, err := h.handshake(); err != nil {
			return err
		}
		_ = h.sendWorld(w.payload, total, chunk) // the relay resets it midway
		for {
			p, err := h.next()
			if err != nil {
				return nil // the reset
			}
			if a, ok := p.(*wire.ClientAck); ok {
				acked = a.Received
			}
		}
	})
	scriptOK(t, script)
	if err == nil || isProtocolError(err) {
		t.Fatalf("join: %v, want a network error", err)
	}
	var re *join.RejectedError
	if errors.As(err, &re) {
		t.Fatalf("a cut reads as a refusal: %v", err)
	}
	c := relay.Conns()[0]
	if !c.Cut() || c.Down() != cut {
		t.Fatalf("relay: cut %v after %d bytes, want a cut after %d", c.Cut(), c.Down(), cut)
	}
	if acked > 5*chunk {
		t.Fatalf("acknowledged %d bytes of the world, received at most %d", acked, 5*chunk)
	}
}
