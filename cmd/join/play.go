package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/lockhost/lockhost/game/colony"
	"github.com/lockhost/lockhost/game/colonycmd"
	"github.com/lockhost/lockhost/internal/termsafe"
	"github.com/lockhost/lockhost/join"
	"github.com/lockhost/lockhost/lockstep"
	"github.com/lockhost/lockhost/wire"
)

// help is the join tool's help for what it reads on standard input: the
// game's commands and queries, and how to leave.
const help = colonycmd.Help + `
  quit                          leave the session (so does the end of input: Ctrl-D, a script's end)`

// readCommands plays the lines typed on in until it ends or ctx is done:
// commands go to the host (and their effect is printed when they apply,
// see typedLog), queries are answered here, anything else is chat.
// Mistakes are reported and reading goes on. It reports whether the user
// is done: the input ended or said quit (or /quit, as in chat programs).
// A read error is not the user's leave: it is said, and the session goes
// on without input.
func readCommands(ctx context.Context, in io.Reader, cur *current, typed *typedLog) (done bool) {
	sc := bufio.NewScanner(in)
	for sc.Scan() {
		if ctx.Err() != nil {
			return false
		}
		sess := cur.get()
		line := strings.TrimSpace(sc.Text())
		if line == "quit" || line == "/quit" {
			return true
		}
		cmd, err := colonycmd.Parse(line)
		switch {
		case errors.Is(err, colonycmd.ErrNotCommand):
			chat(sess, line)
			continue
		case err != nil:
			fmt.Fprintln(stderr, err)
			continue
		case cmd != nil:
			typed.add(*cmd)
			if err := sess.Send(cmd.MapID, cmd.Kind, cmd.Payload); err != nil {
				typed.forget(*cmd)
				fmt.Fprintln(stderr, "not sent: the connection is down")
			}
			continue
		}
		if line != "" {
			query(sess, line)
		}
	}
	if ctx.Err() != nil {
		return false
	}
	if err := sc.Err(); err != nil {
		fmt.Fprintf(stderr, "standard input: %v; no more commands are read (Ctrl-C leaves)\n", err)
		return false
	}
	fmt.Fprintln(stderr, "end of standard input: leaving (--no-input stays without reading it)")
	return true
}

// chat sends a chat line, saying why when it cannot.
func chat(sess *join.Session, line string) {
	if err := sess.Chat(line); err != nil {
		if len(line) > wire.MaxChatBytes {
			fmt.Fprintln(stderr, err)
			return
		}
		fmt.Fprintln(stderr, "not sent: the connection is down")
	}
}

// query answers a line that reads state (or chats with say): help, maps,
// pawns, players.
func query(sess *join.Session, line string) {
	f := strings.Fields(line)
	switch f[0] {
	case "help":
		fmt.Fprintln(stdout, help)
	case "say":
		chat(sess, strings.TrimSpace(strings.TrimPrefix(line, "say")))
	case "players":
		printPlayers(sess.Players())
	case "maps":
		sess.Do(func(sim lockstep.Sim) {
			if w, ok := sim.(*colony.World); ok {
				for _, m := range w.Stats() {
					fmt.Fprintf(stdout, "map %d: %dx%d, %d things, %d pawns\n", m.ID, m.Width, m.Height, m.Things, m.Pawns)
				}
			}
		})
	case "pawns":
		id, _ := strconv.Atoi(f[1])
		sess.Do(func(sim lockstep.Sim) {
			w, ok := sim.(*colony.World)
			if !ok {
				return
			}
			if !slices.Contains(sim.MapIDs(), int32(id)) {
				fmt.Fprintf(stdout, "there is no map %d (maps lists them)\n", id)
				return
			}
			pawns := w.Pawns(int32(id))
			if len(pawns) == 0 {
				fmt.Fprintf(stdout, "map %d has no pawns\n", id)
			}
			for _, p := range pawns {
				fmt.Fprintf(stdout, "pawn %d %s at %d,%d: %s\n", p.ID, p.Kind, p.X, p.Y, p.Job)
			}
		})
	}
}

// printPlayers lists the players this client knows of, with the round
// trip the host measured.
func printPlayers(list []join.Player) {
	fmt.Fprintf(stdout, "%d in the session:\n", len(list))
	for _, p := range list {
		role := fmt.Sprintf("faction %d", p.Faction)
		if p.Spectator {
			role = "spectator"
		}
		fmt.Fprintf(stdout, "  player %d %s: %s, %s, latency %d ms\n", p.ID, termsafe.String(p.Name), p.Status, role, p.Latency.Milliseconds())
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
