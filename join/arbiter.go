package join

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/lockhost/lockhost/lockstep"
	"github.com/lockhost/lockhost/password"
	"github.com/lockhost/lockhost/snapshot"
	"github.com/lockhost/lockhost/wire"
)

// The arbiter of a relay session (docs/protocol.md, section 14): a joiner
// with Config.ArbiterSecret proves it at the handshake and then answers
// the host's upload requests: the world, when the session is new
// (Config.World makes it), and a join point at the cut the host names,
// which it holds its simulation at, as for a repair.

// ErrNotRelay is Join's error when Config.ArbiterSecret is set and the
// host sent no arbiter challenge: it is not a relay host, or has no
// arbiter secret.
var ErrNotRelay = errors.New("the host takes no arbiter: it is not a relay host, or it has no arbiter secret")

// arbiterProof is the Client_Username proof of the arbiter secret, or
// nil when this client is not meant to be the arbiter.
func (s *Session) arbiterProof(ml *wire.ServerModList) ([]byte, error) {
	if len(s.cfg.ArbiterSecret) == 0 {
		return nil, nil
	}
	if len(ml.ArbiterChallenge) == 0 {
		return nil, ErrNotRelay
	}
	return password.ArbiterProof(s.cfg.ArbiterSecret, ml.ArbiterChallenge), nil
}

// worldRequest is the receive loop's way to say the host asked for the
// world instead of sending one: this client is the first arbiter of a
// new relay session.
type worldRequest struct{ req *wire.ServerUploadRequest }

func (w *worldRequest) Error() string { return "the host asked for the world" }

// uploadPending is a join point the host asked for and the follower is
// held for.
type uploadPending struct {
	req   *wire.ServerUploadRequest
	asked time.Time
}

// uploadWorld answers a new relay session's request for the world: it
// makes the world (Config.World), uploads it, waits for the host to take
// it, and reports WorldReady at its tick, as download does for a world
// received.
func (s *Session) uploadWorld(ctx context.Context, start time.Time, req *wire.ServerUploadRequest) error {
	if s.cfg.World == nil || len(s.cfg.ArbiterSecret) == 0 {
		return protoErr("the host asked this client for the world, and it has none to give")
	}
	sim, err := s.cfg.World()
	if err != nil {
		return fmt.Errorf("make the world to upload: %w", err)
	}
	pt, err := snapshot.Build(sim, snapshot.BuildOptions{})
	if err != nil {
		return fmt.Errorf("encode the world to upload: %w", err)
	}
	ul := time.Now()
	if err := s.sendUpload(req, pt); err != nil {
		return err
	}
	var ticks []*wire.ServerTick
	accepted := false
	ph := s.afterHandshake("unexpected %s while uploading the world", map[wire.ID]handler{
		wire.IDServerTick: on(func(t *wire.ServerTick) error { ticks = append(ticks, t); return nil }),
		wire.IDServerUploadResult: on(func(r *wire.ServerUploadResult) error {
			if r.Request != req.Request {
				return nil
			}
			if r.Result != wire.UploadAccepted {
				return fmt.Errorf("the host did not take the world (%s): %s", r.Result, r.Message)
			}
			accepted = true
			return nil
		}),
	})
	for !accepted {
		p, err := s.recv(ctx)
		if err != nil {
			return err
		}
		if err := ph.handle(p); err != nil {
			return err
		}
	}
	s.timings.Download, s.timings.Bytes, s.timings.SnapshotTick = time.Since(ul), pt.CompressedSize(), pt.Tick
	s.timings.RawBytes, s.timings.Codec = pt.RawSize(), pt.World.Codec
	f, err := lockstep.NewFollower(sim, nil)
	if err != nil {
		return err
	}
	f.OnStep(s.stepped)
	f.OnApply(s.applied)
	f.Grant(sim.Tick())
	s.follower = f
	for _, t := range ticks {
		if err := s.applyTick(t); err != nil {
			return err
		}
	}
	if err := s.worldReady(); err != nil {
		return err
	}
	s.timings.Total = time.Since(start)
	s.cfg.Logger.Info("world uploaded", "tick", pt.Tick, "bytes", pt.CompressedSize())
	return nil
}

// worldRequested is the download's answer to a world request: the
// download ends, and the join uploads the world instead (uploadWorld).
func (d *download) worldRequested(r *wire.ServerUploadRequest) error {
	if r.Kind != wire.UploadWorld || d.recv.Received() > 0 {
		return protoErr("unexpected %s while downloading", r.ID())
	}
	return &worldRequest{req: r}
}

// uploadRequested takes a request for a join point or maps once in the
// session. Requests are answered in order: the follower holds at the
// first one's cut, and finishUpload uploads the state there and holds at
// the next.
func (s *Session) uploadRequested(r *wire.ServerUploadRequest) error {
	if len(s.cfg.ArbiterSecret) == 0 || !s.ready || s.cfg.Light {
		return protoErr("Server_UploadRequest to a client that is not an arbiter")
	}
	if r.Kind == wire.UploadWorld {
		return protoErr("a world request once in the session")
	}
	if s.resync != nil {
		return protoErr("upload request %d during a repair of this arbiter", r.Request)
	}
	s.uploads = append(s.uploads, &uploadPending{req: r, asked: time.Now()})
	if len(s.uploads) == 1 {
		return s.holdForUpload()
	}
	return nil
}

// holdForUpload holds the follower at the cut of the first request
// waiting.
func (s *Session) holdForUpload() error {
	r := s.uploads[0].req
	if err := s.follower.HoldAt(r.Tick, r.Applied); err != nil {
		return protoErr("upload request %d: %w", r.Request, err)
	}
	return nil
}

// finishUpload uploads the held state once the follower reached the
// first request's cut, and lets the simulation go on (or holds at the
// next request's cut). It reports whether it released a hold. The state
// is cloned when the game can clone, and encoded and sent off the
// simulation goroutine, one upload after the other; else it is copied
// here.
func (s *Session) finishUpload() (bool, error) {
	if len(s.uploads) == 0 || !s.follower.Held() {
		return false, nil
	}
	u := s.uploads[0]
	s.uploads = s.uploads[1:]
	sim := s.follower.Sim()
	var st snapshot.State = sim
	if c, ok := sim.(lockstep.Cloner); ok {
		st = c.Clone()
	} else {
		ids := u.req.Maps
		if len(ids) == 0 {
			ids = sim.MapIDs()
		}
		raw, err := snapshot.CutMaps(sim, ids)
		if err != nil {
			return false, fmt.Errorf("cut the state to upload: %w", err)
		}
		st = raw.State()
	}
	s.follower.Release()
	if len(s.uploads) > 0 {
		if err := s.holdForUpload(); err != nil {
			return false, err
		}
	}
	s.uploadOnce.Do(func() {
		s.uploadQ = make(chan func(), 16)
		go func() {
			for {
				select {
				case fn := <-s.uploadQ:
					fn()
				case <-s.closed:
					return
				}
			}
		}()
	})
	send := func() {
		pt, err := snapshot.Build(st, snapshot.BuildOptions{Maps: u.req.Maps})
		if err == nil {
			err = s.sendUpload(u.req, pt)
		}
		if err != nil {
			s.cfg.Logger.Warn("upload", "request", u.req.Request, "err", err)
			return
		}
		s.cfg.Logger.Debug("uploaded", "request", u.req.Request, "kind", u.req.Kind.String(), "tick", pt.Tick,
			"bytes", pt.CompressedSize(), "ms", time.Since(u.asked).Milliseconds())
	}
	select {
	case s.uploadQ <- send:
	case <-s.closed:
	}
	return true, nil
}

// uploadResult logs how the host took an upload.
func (s *Session) uploadResult(r *wire.ServerUploadResult) error {
	if len(s.cfg.ArbiterSecret) == 0 {
		return protoErr("Server_UploadResult to a client that is not an arbiter")
	}
	if r.Result != wire.UploadAccepted {
		s.cfg.Logger.Warn("upload not taken", "request", r.Request, "result", r.Result.String(), "message", r.Message)
	}
	return nil
}

// sendUpload sends pt as the answer to req, in Client_Upload chunks.
func (s *Session) sendUpload(req *wire.ServerUploadRequest, pt *snapshot.Point) error {
	pl, err := snapshot.NewPayload(pt, 0, pt.Tick, nil)
	if err != nil {
		return fmt.Errorf("lay out the upload: %w", err)
	}
	if pl.Total() > req.Limit {
		return fmt.Errorf("the world is %d bytes compressed, over the host's upload limit of %d", pl.Total(), req.Limit)
	}
	for off := uint64(0); off < pl.Total(); {
		c := pl.Chunk(off, wire.MaxChunkData)
		if err := s.write(&wire.ClientUpload{Request: req.Request, Offset: off, Total: pl.Total(), Data: c}); err != nil {
			return fmt.Errorf("upload: %w", err)
		}
		off += uint64(len(c))
	}
	return nil
}
