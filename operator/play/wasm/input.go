//go:build js && wasm

package main

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/lockhost/lockhost/game/colony"
	"github.com/lockhost/lockhost/game/colonycmd"
	"github.com/lockhost/lockhost/join"
	"github.com/lockhost/lockhost/lockstep"
)

// do runs fn on the simulation's goroutine with the colony, off the
// page's callback (which must not wait for it); false without a session.
func (c *client) do(fn func(sess *join.Session, w *colony.World)) bool {
	sess := c.cur.Load()
	if sess == nil {
		return false
	}
	go sess.Do(func(sim lockstep.Sim) {
		if w, ok := sim.(*colony.World); ok {
			fn(sess, w)
		}
	})
	return true
}

// view shows map id from the next frame on.
func (c *client) view(id int32) {
	if c.canvas == nil {
		return
	}
	v := c.canvas
	v.mu.Lock()
	if v.mapID != id {
		v.mapID, v.selected = id, 0
	}
	v.mu.Unlock()
	c.redraw()
}

// redraw draws a frame now, for a change the ticks would show only when
// they come (a paused game).
func (c *client) redraw() {
	c.do(func(_ *join.Session, w *colony.World) {
		c.canvas.lastFrame = time.Time{}
		c.frame(w)
	})
}

// click takes a click on cell x, y of the shown map: a pawn within r
// cells is selected; else, in mode "spawn THING COUNT", things are
// spawned there, and otherwise the selected pawn is sent there.
func (c *client) click(x, y, r int, mode string) {
	c.do(func(sess *join.Session, w *colony.World) {
		v := c.canvas
		v.mu.Lock()
		mapID, sel := v.mapID, v.selected
		v.mu.Unlock()
		if f := strings.Fields(mode); len(f) == 3 && f[0] == "spawn" {
			n, _ := strconv.Atoi(f[2])
			c.send(sess, colony.SpawnThing(mapID, f[1], x, y, max(1, n)))
			return
		}
		if p, ok := nearestPawn(w.Pawns(mapID), x, y, r); ok {
			v.mu.Lock()
			v.selected = p.ID
			v.mu.Unlock()
			c.say("info", "", fmt.Sprintf("pawn %d %s at %d,%d: %s; click a cell to send it there", p.ID, p.Kind, p.X, p.Y, p.Job))
		} else if sel != 0 {
			c.send(sess, colony.MovePawn(mapID, sel, x, y))
		}
		c.canvas.lastFrame = time.Time{}
		c.frame(w)
	})
}

// nearestPawn is the pawn closest to x, y within r cells.
func nearestPawn(pawns []colony.PawnInfo, x, y, r int) (colony.PawnInfo, bool) {
	best, bestD := colony.PawnInfo{}, -1
	for _, p := range pawns {
		dx, dy := p.X-x, p.Y-y
		if d := max(dx, -dx, dy, -dy); d <= r && (bestD < 0 || d < bestD) {
			best, bestD = p, d
		}
	}
	return best, bestD >= 0
}

// send asks the host to run cmd.
func (c *client) send(sess *join.Session, cmd lockstep.Command) {
	if c.opts.spectate {
		c.say("error", "", "a spectator sends no commands")
		return
	}
	if err := sess.Send(cmd.MapID, cmd.Kind, cmd.Payload); err != nil {
		c.say("error", "", "not sent: the connection is down")
	}
}

// command takes a line typed on the page, as the join tool takes one
// typed on standard input: a command goes to the host, a query is
// answered here, anything else is chat.
func (c *client) command(line string) {
	line = strings.TrimSpace(line)
	cmd, err := colonycmd.Parse(line)
	sess := c.cur.Load()
	switch {
	case line == "":
	case sess == nil:
		c.say("error", "", "not in a session")
	case errors.Is(err, colonycmd.ErrNotCommand):
		c.chat(sess, line)
	case err != nil:
		c.say("error", "", err.Error())
	case cmd != nil:
		c.send(sess, *cmd)
	default:
		c.query(sess, line)
	}
}

// chat sends a chat line.
func (c *client) chat(sess *join.Session, text string) {
	if err := sess.Chat(text); err != nil {
		c.say("error", "", "not sent: "+err.Error())
	}
}

// query answers help, say, players, maps and pawns.
func (c *client) query(sess *join.Session, line string) {
	f := strings.Fields(line)
	switch f[0] {
	case "help":
		c.say("info", "", colonycmd.Help+"\non the map: click a pawn to select it, click a cell to send it there; pick a thing to spawn it where you click")
	case "say":
		c.chat(sess, strings.TrimSpace(strings.TrimPrefix(line, "say")))
	case "players":
		for _, p := range sess.Players() {
			c.say("info", "", fmt.Sprintf("player %d %s: %s, latency %d ms", p.ID, p.Name, p.Status, p.Latency.Milliseconds()))
		}
	case "maps":
		c.do(func(_ *join.Session, w *colony.World) {
			for _, m := range w.Stats() {
				c.say("info", "", fmt.Sprintf("map %d: %dx%d, %d things, %d pawns", m.ID, m.Width, m.Height, m.Things, m.Pawns))
			}
		})
	case "pawns":
		id, _ := strconv.Atoi(f[1])
		c.do(func(_ *join.Session, w *colony.World) {
			if !slices.Contains(w.MapIDs(), int32(id)) {
				c.say("error", "", fmt.Sprintf("there is no map %d (maps lists them)", id))
				return
			}
			for _, p := range w.Pawns(int32(id)) {
				c.say("info", "", fmt.Sprintf("pawn %d %s at %d,%d: %s", p.ID, p.Kind, p.X, p.Y, p.Job))
			}
		})
	}
}

// corrupt changes this browser's copy of map id, for tests of desync
// repair: only a page opened with debug=1 may.
func (c *client) corrupt(id int32) string {
	if !c.opts.debug {
		return "corrupt needs the page opened with debug=1"
	}
	ok := c.do(func(_ *join.Session, w *colony.World) {
		if err := w.Perturb(id); err != nil {
			c.say("error", "", err.Error())
			return
		}
		c.update(func(s *state) { s.Corrupted++ })
		c.say("info", "", fmt.Sprintf("debug: corrupted map %d at tick %d in this browser", id, w.Tick()))
	})
	if !ok {
		return "not in a session"
	}
	return ""
}

// bot sends about rate random valid commands a second, as the join
// tool's --bot does.
func (c *client) bot(rate float64, seed uint64) {
	if rate <= 0 || c.opts.spectate {
		return
	}
	rng := rand.New(rand.NewPCG(seed, 0x6c6f636b))
	tick := time.NewTicker(time.Duration(float64(time.Second) / rate))
	defer tick.Stop()
	for range tick.C {
		c.do(func(sess *join.Session, w *colony.World) {
			if cmd, ok := colony.RandomCommand(w, rng); ok {
				_ = sess.Send(cmd.MapID, cmd.Kind, cmd.Payload)
			}
		})
	}
}
