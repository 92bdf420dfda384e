package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/lockhost/lockhost/colony"
	"github.com/lockhost/lockhost/lockstep"
)

// playHelp documents the commands typed on standard input.
const playHelp = `commands (one per line):
  speed N                       set the game speed: 0 paused, 1 normal, 2 or 3 fast
  spawn THING MAP X Y [COUNT]   spawn a thing (a ThingDef name) on a map at a cell
  move MAP PAWN X Y             send a pawn to a cell
  pawns MAP                     list the pawns of a map
  maps                          list the maps
  help                          this text`

// parseCommand turns one typed line into a command. It returns a nil
// command for lines that only read state (pawns, maps, help) and an error
// naming the mistake.
func parseCommand(line string) (*lockstep.Command, error) {
	f := strings.Fields(line)
	if len(f) == 0 {
		return nil, nil
	}
	nums := func(args []string) ([]int, error) {
		out := make([]int, len(args))
		for i, a := range args {
			n, err := strconv.Atoi(a)
			if err != nil {
				return nil, fmt.Errorf("%q is not a number", a)
			}
			out[i] = n
		}
		return out, nil
	}
	switch f[0] {
	case "speed":
		if len(f) != 2 {
			return nil, errors.New("usage: speed N")
		}
		n, err := nums(f[1:])
		if err != nil {
			return nil, err
		}
		if n[0] < 0 || n[0] > lockstep.MaxSpeed {
			return nil, fmt.Errorf("speed must be 0 to %d", lockstep.MaxSpeed)
		}
		c := lockstep.SetSpeed(uint8(n[0]))
		return &c, nil
	case "spawn":
		if len(f) != 5 && len(f) != 6 {
			return nil, errors.New("usage: spawn THING MAP X Y [COUNT]")
		}
		n, err := nums(f[2:])
		if err != nil {
			return nil, err
		}
		count := 1
		if len(n) == 4 {
			count = n[3]
		}
		c := colony.SpawnThing(int32(n[0]), f[1], n[1], n[2], count)
		return &c, nil
	case "move":
		if len(f) != 5 {
			return nil, errors.New("usage: move MAP PAWN X Y")
		}
		n, err := nums(f[1:])
		if err != nil {
			return nil, err
		}
		c := colony.MovePawn(int32(n[0]), int32(n[1]), n[2], n[3])
		return &c, nil
	case "pawns", "maps", "help":
		return nil, nil
	}
	return nil, fmt.Errorf("unknown command %q (try help)", f[0])
}

// readCommands sends the commands typed on in until it ends or ctx is
// done. Mistakes are reported and reading goes on.
func readCommands(ctx context.Context, in io.Reader, cur *current) {
	sc := bufio.NewScanner(in)
	for sc.Scan() && ctx.Err() == nil {
		sess := cur.get()
		line := strings.TrimSpace(sc.Text())
		cmd, err := parseCommand(line)
		if err != nil {
			fmt.Fprintln(stderr, err)
			continue
		}
		if cmd != nil {
			if err := sess.Send(cmd.MapID, cmd.Kind, cmd.Payload); err != nil {
				fmt.Fprintln(stderr, "not sent: the connection is down")
			}
			continue
		}
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		switch f[0] {
		case "help":
			fmt.Fprintln(stdout, playHelp)
		case "maps":
			sess.Do(func(sim lockstep.Sim) {
				if w, ok := sim.(*colony.World); ok {
					for _, m := range w.Stats() {
						fmt.Fprintf(stdout, "map %d: %dx%d, %d things, %d pawns\n", m.ID, m.Width, m.Height, m.Things, m.Pawns)
					}
				}
			})
		case "pawns":
			id, err := strconv.Atoi(strings.Join(f[1:], ""))
			if err != nil {
				fmt.Fprintln(stderr, "usage: pawns MAP")
				continue
			}
			sess.Do(func(sim lockstep.Sim) {
				if w, ok := sim.(*colony.World); ok {
					for _, p := range w.Pawns(int32(id)) {
						fmt.Fprintf(stdout, "pawn %d %s at %d,%d: %s\n", p.ID, p.Kind, p.X, p.Y, p.Job)
					}
				}
			})
		}
	}
}

// runBot issues about rate random valid commands per second: mostly pawns
// sent to random passable cells, sometimes items spawned there. It reads
// the world on the simulation's goroutine to pick valid targets.
func runBot(ctx context.Context, cur *current, rate float64, seed uint64) {
	if rate <= 0 {
		return
	}
	rng := rand.New(rand.NewPCG(seed, 0x6c6f636b))
	tick := time.NewTicker(time.Duration(float64(time.Second) / rate))
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		sess := cur.get()
		sess.Do(func(sim lockstep.Sim) {
			w, ok := sim.(*colony.World)
			if !ok {
				return
			}
			if cmd, ok := colony.RandomCommand(w, rng); ok {
				_ = sess.Send(cmd.MapID, cmd.Kind, cmd.Payload)
			}
		})
	}
}
