//go:build js && wasm

package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
	"syscall/js"
	"time"

	"github.com/lockhost/lockhost/game/colony"
	gamecontent "github.com/lockhost/lockhost/game/content"
	"github.com/lockhost/lockhost/lockstep"
	"github.com/lockhost/lockhost/replay"
	"github.com/lockhost/lockhost/saves"
)

// Bounds of a recording the viewer plays.
const (
	// maxReplayBytes is the largest recording fetched: a segment of the
	// host's default size (64 MiB of commands) and its start save fit.
	maxReplayBytes = 256 << 20
	// maxReplayRaw bounds each inflated blob of the start save.
	maxReplayRaw = 512 << 20
	// replayFrame is how often the viewer steps and draws while playing.
	replayFrame = time.Second / 60
	// fastBudget is how long an as-fast-as-possible batch of ticks runs
	// before the browser gets its turn.
	fastBudget = 30 * time.Millisecond
)

// replayOptions are what the page passes to replay.
type replayOptions struct {
	url, name string
	canvas    js.Value
}

// replayJSON is the viewer's part of state().
type replayJSON struct {
	Name        string  `json:"name"`
	Game        string  `json:"game"`
	Version     string  `json:"version"`
	Started     string  `json:"started"`
	TickRate    int     `json:"tick_rate"`
	FirstTick   uint64  `json:"first_tick"`
	LastTick    uint64  `json:"last_tick"`
	Checkpoints int     `json:"checkpoints"`
	Checked     int     `json:"checked"`
	Playing     bool    `json:"playing"`
	Speed       float64 `json:"speed"` // a multiple of the tick rate; 0 as fast as possible
	Done        bool    `json:"done"`  // the end reached, or a checkpoint failed
	Complete    bool    `json:"complete"`
	FailedTick  uint64  `json:"failed_tick,omitempty"`
	GoodTick    uint64  `json:"good_tick"`
	Failure     string  `json:"failure,omitempty"`
}

// replayControl is what the page's buttons set, read by the viewer's
// goroutine.
type replayControl struct {
	mu      sync.Mutex
	playing bool
	speed   float64
}

func (rc *replayControl) get() (bool, float64) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return rc.playing, rc.speed
}

// setPlaying plays or pauses the replay.
func (c *client) setPlaying(on bool) {
	c.ctl.mu.Lock()
	c.ctl.playing = on
	c.ctl.mu.Unlock()
	c.update(func(s *state) {
		if s.Replay != nil {
			s.Replay.Playing = on
		}
	})
}

// setSpeed sets the replay's speed: a multiple of the recording's tick
// rate, 0 for as fast as the browser runs it.
func (c *client) setSpeed(x float64) {
	if x < 0 || x > 64 {
		return
	}
	c.ctl.mu.Lock()
	c.ctl.speed = x
	c.ctl.mu.Unlock()
	c.update(func(s *state) {
		if s.Replay != nil {
			s.Replay.Speed = x
		}
	})
}

// startReplay fetches the recording and plays it on a goroutine of its
// own, unless a join or a replay runs.
func (c *client) startReplay(o replayOptions) {
	c.mu.Lock()
	if c.running || c.left {
		c.mu.Unlock()
		return
	}
	c.running = true
	c.st = state{Phase: "download", Map: -1, LogSeq: c.lineSeq}
	c.mu.Unlock()
	c.ctl.mu.Lock()
	c.ctl.playing, c.ctl.speed = true, 1
	c.ctl.mu.Unlock()
	go func() {
		err := c.runReplay(o)
		c.mu.Lock()
		c.running = false
		c.mu.Unlock()
		if err != nil {
			c.update(func(s *state) { s.Phase, s.Error = "error", err.Error() })
			c.say("error", "", err.Error())
		}
	}()
}

// runReplay fetches, loads and plays the recording o names.
func (c *client) runReplay(o replayOptions) error {
	b, err := c.fetch(o.url)
	if err != nil {
		return fmt.Errorf("the recording %s did not load: %w", o.name, err)
	}
	c.update(func(s *state) { s.Phase, s.Done, s.Total = "load", 0, 0 })
	time.Sleep(time.Millisecond) // the page shows the phase
	bundle, err := gamecontent.Load(nil, "")
	if err != nil {
		return fmt.Errorf("content: %w", err)
	}
	c.canvas = newCanvasView(o.canvas)
	p, err := replay.NewPlayer(o.name, bytes.NewReader(b), int64(len(b)), func(start *io.SectionReader) (lockstep.Sim, error) {
		f, err := saves.ReadFrom("the start save", start, start.Size())
		if err != nil {
			return nil, err
		}
		return saves.LoadFrom(f, start, nil, colony.MapLoader(bundle.Content), maxReplayRaw)
	})
	if err != nil {
		return fmt.Errorf("the recording %s does not replay: %w", o.name, err)
	}
	w, ok := p.Sim().(*colony.World)
	if !ok {
		return errors.New("the recording is not of the colony game")
	}
	res := p.Result()
	h := res.Header
	started := ""
	if h.Started != 0 {
		started = h.StartedAt().UTC().Format(time.RFC3339)
	}
	c.update(func(s *state) {
		s.Phase, s.Game, s.Spectator, s.Tick = "replay", h.Game, true, w.Tick()
		s.Replay = &replayJSON{Name: o.name, Game: h.Game, Version: h.Version, Started: started, TickRate: h.TickRate,
			FirstTick: res.FirstTick, LastTick: res.LastTick, Checkpoints: res.Checkpoints, Playing: true, Speed: 1, GoodTick: res.GoodTick}
	})
	c.say("info", "", fmt.Sprintf("recording %s: %s, ticks %d to %d, %d commands, %d checkpoints",
		o.name, h.Game, res.FirstTick, res.LastTick, res.Commands, res.Checkpoints))
	return c.play(p, w, max(h.TickRate, 1))
}

// play runs the replay at the pace the page sets until its end or its
// first failed checkpoint, drawing as the live view does.
func (c *client) play(p *replay.Player, w *colony.World, rate int) error {
	last := time.Now()
	owed := 0.0 // ticks due at the speed set, not yet run
	for !p.Done() {
		playing, speed := c.ctl.get()
		now := time.Now()
		elapsed := now.Sub(last)
		last = now
		var err error
		switch {
		case !playing:
			owed = 0
		case speed == 0:
			for start := time.Now(); err == nil && !p.Done() && time.Since(start) < fastBudget; {
				_, err = p.Step(64)
			}
		default:
			owed = min(owed+elapsed.Seconds()*float64(rate)*speed, float64(rate)*speed/4+1) // a stall is not made up for
			n := int(owed)
			owed -= float64(n)
			_, err = p.Step(n)
		}
		if err != nil {
			return fmt.Errorf("the recording is damaged at tick %d: %w", w.Tick(), err)
		}
		c.showReplay(p, w)
		time.Sleep(replayFrame) // the browser runs: input, painting
	}
	c.showReplay(p, w)
	res := p.Result()
	if res.OK() {
		c.say("info", "", fmt.Sprintf("the end of the recording, tick %d: all %d checkpoints matched", w.Tick(), res.Checked))
	} else {
		c.say("error", "", replayFailure(res))
	}
	return nil
}

// replayFailure is the one sentence the page shows for a replay that
// diverged.
func replayFailure(res replay.Result) string {
	return fmt.Sprintf("the replay differs from the recording at tick %d (the last checkpoint that matched was at tick %d): %s",
		res.FailedTick, res.GoodTick, res.Failure)
}

// showReplay draws the map and updates the page's state.
func (c *client) showReplay(p *replay.Player, w *colony.World) {
	c.frame(w)
	res := p.Result()
	c.update(func(s *state) {
		s.Tick = w.Tick()
		r := s.Replay
		r.Checked, r.GoodTick, r.FailedTick, r.Done, r.Complete = res.Checked, res.GoodTick, res.FailedTick, p.Done(), res.Complete
		if !res.OK() {
			r.Failure = replayFailure(res)
		}
		if r.Done {
			r.Playing = false
		}
	})
}

// fetch reads url whole with the browser's fetch, refusing more than
// maxReplayBytes (by its Content-Length first, then as it streams), and
// reports its progress in the state.
func (c *client) fetch(url string) ([]byte, error) {
	resp, err := await(context.Background(), js.Global().Call("fetch", url))
	if err != nil {
		return nil, err
	}
	if !resp.Get("ok").Bool() {
		return nil, fmt.Errorf("HTTP %d", resp.Get("status").Int())
	}
	total := int64(0)
	if v := resp.Get("headers").Call("get", "Content-Length"); v.Type() == js.TypeString {
		total, _ = strconv.ParseInt(v.String(), 10, 64)
	}
	if total > maxReplayBytes {
		return nil, fmt.Errorf("%d bytes, over the %d MiB the viewer plays", total, maxReplayBytes>>20)
	}
	buf := make([]byte, 0, max(total, 0))
	reader := resp.Get("body").Call("getReader")
	defer reader.Call("cancel")
	for {
		chunk, err := await(context.Background(), reader.Call("read"))
		if err != nil {
			return nil, err
		}
		if chunk.Get("done").Bool() {
			return buf, nil
		}
		v := chunk.Get("value")
		n := v.Get("length").Int()
		if int64(len(buf)+n) > maxReplayBytes {
			return nil, fmt.Errorf("over the %d MiB the viewer plays", maxReplayBytes>>20)
		}
		at := len(buf)
		buf = append(buf, make([]byte, n)...)
		js.CopyBytesToGo(buf[at:], v)
		c.update(func(s *state) { s.Done, s.Total = uint64(len(buf)), uint64(max(total, 0)) })
	}
}
