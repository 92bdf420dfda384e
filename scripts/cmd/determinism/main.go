// Command determinism runs the default-content colony world with a
// deterministic command log and prints the world and map hashes at
// checkpoints, so that builds for different architectures can be compared
// byte for byte (scripts/determinism does that for amd64, 386, arm64
// under qemu-user, and js/wasm under Node).
//
// The command log is derived only from a PCG generator with a fixed seed
// (math/rand/v2, reduced with 64-bit integer arithmetic only) and from the
// world's own state, read through World.Pawns and World.Passable, so it is
// the same on every machine. About one tick in three carries commands:
// spawns of random thing defs at random cells, pawn moves, and invalid
// commands (unknown map, world scope, engine kind, out-of-bounds cell,
// unknown thing or pawn, garbage payload...) whose refusals must match
// too. Commands are applied with World.Apply at the current tick, before
// Step, as lockstep does.
//
// Output, all on stdout and free of anything machine-specific:
//
//	tick=N world=<16 hex> map0=<16 hex> map1=... (at tick 0, every -every ticks and at -ticks)
//	commands=N applied=A refused=R outcomes=<16 hex>
//
// outcomes hashes every command's tick, sequence and result (the refusal
// message included).
//
// -log FILE writes the command log (one command per line: tick, map,
// kind, payload in hex or "-") and -replay FILE applies such a log instead
// of generating one; a replayed log never calls Pawns or Passable, so
// comparing a replay with the run that logged it also checks that those
// helpers leave the simulation alone.
//
// Run: go run ./scripts/cmd/determinism [-ticks 10000] [-every 1000] [-seed 1] [-maps 4] [-side 250]
package main

import (
	"bufio"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"hash"
	"hash/fnv"
	"io"
	"math/bits"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"

	"github.com/lockhost/lockhost/game/colony"
	"github.com/lockhost/lockhost/lockstep"
)

// config is one run's parameters.
type config struct {
	Ticks  uint64 // ticks to simulate
	Every  uint64 // ticks between checkpoints
	Seed   uint64 // world seed; the command generator is seeded from it too
	Maps   int    // number of maps
	Side   int    // map width and height
	Log    string // file to write the command log to; "" for none
	Replay string // file to read the command log from instead of generating; "" to generate
}

func defaultConfig() config {
	return config{Ticks: 10000, Every: 1000, Seed: 1, Maps: colony.DefaultMaps, Side: colony.DefaultWidth}
}

func main() {
	cfg := defaultConfig()
	flag.Uint64Var(&cfg.Ticks, "ticks", cfg.Ticks, "ticks to simulate")
	flag.Uint64Var(&cfg.Every, "every", cfg.Every, "ticks between checkpoints")
	flag.Uint64Var(&cfg.Seed, "seed", cfg.Seed, "world seed (also seeds the command generator)")
	flag.IntVar(&cfg.Maps, "maps", cfg.Maps, "number of maps")
	flag.IntVar(&cfg.Side, "side", cfg.Side, "map width and height in cells")
	flag.StringVar(&cfg.Log, "log", "", "write the command log to `file`")
	flag.StringVar(&cfg.Replay, "replay", "", "apply the command log in `file` instead of generating one")
	flag.Parse()
	if flag.NArg() != 0 {
		fmt.Fprintln(os.Stderr, "detcheck: unexpected arguments:", flag.Args())
		os.Exit(2)
	}
	if err := run(cfg, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "detcheck:", err)
		os.Exit(1)
	}
}

// run simulates cfg.Ticks ticks and writes the checkpoints and the
// command summary to out.
func run(cfg config, out io.Writer) (err error) {
	if cfg.Every == 0 {
		return errors.New("-every must be at least 1")
	}
	if cfg.Log != "" && cfg.Replay != "" {
		return errors.New("-log and -replay exclude each other")
	}
	content, _, err := colony.DefaultContent()
	if err != nil {
		return err
	}
	w, err := colony.New(content, colony.Config{Maps: cfg.Maps, Width: cfg.Side, Height: cfg.Side, Seed: cfg.Seed})
	if err != nil {
		return err
	}

	var source commandSource
	if cfg.Replay != "" {
		rp, err := openReplay(cfg)
		if err != nil {
			return err
		}
		defer rp.close()
		source = rp
	} else {
		source = newGenerator(cfg, w)
	}

	var logw *bufio.Writer
	if cfg.Log != "" {
		f, err := os.Create(cfg.Log)
		if err != nil {
			return err
		}
		defer func() {
			if cerr := f.Close(); err == nil {
				err = cerr
			}
		}()
		logw = bufio.NewWriter(f)
		fmt.Fprintf(logw, "%s seed=%d maps=%d side=%d\n", logHeader, cfg.Seed, cfg.Maps, cfg.Side)
	}

	bw := bufio.NewWriter(out)
	tl, err := simulate(cfg, w, source, bw, logw)
	if err != nil {
		return err
	}
	fmt.Fprintf(bw, "commands=%d applied=%d refused=%d outcomes=%016x\n", tl.applied+tl.refused, tl.applied, tl.refused, tl.outcomes.Sum64())
	if logw != nil {
		if err := logw.Flush(); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// simulate steps w to cfg.Ticks, applying source's commands at each
// tick (and writing them to logw unless it is nil), with a checkpoint
// to out every cfg.Every ticks and at the last.
func simulate(cfg config, w *colony.World, source commandSource, out io.Writer, logw *bufio.Writer) (*tally, error) {
	tl := &tally{outcomes: fnv.New64a()}
	for {
		t := w.Tick()
		if t%cfg.Every == 0 || t == cfg.Ticks {
			checkpoint(out, w)
		}
		if t == cfg.Ticks {
			return tl, nil
		}
		cmds, err := source.commands(t)
		if err != nil {
			return nil, err
		}
		for i, c := range cmds {
			c.Tick = t
			c.Seq = uint32(i)
			c.Player = 1
			if logw != nil {
				writeLogLine(logw, c)
			}
			tl.apply(w, c)
		}
		w.Step()
	}
}

// tally counts the commands applied and refused and hashes the outcome
// of each, the refusal's error included.
type tally struct {
	applied, refused uint64
	outcomes         hash.Hash64
}

// apply applies c to w and counts the outcome.
func (tl *tally) apply(w *colony.World, c lockstep.Command) {
	if err := w.Apply(c); err != nil {
		tl.refused++
		fmt.Fprintf(tl.outcomes, "%d %d refused %s\n", c.Tick, c.Seq, err)
	} else {
		tl.applied++
		fmt.Fprintf(tl.outcomes, "%d %d applied\n", c.Tick, c.Seq)
	}
}

// commandSource gives the commands of each tick, in application order.
// It is asked once per tick, in tick order.
type commandSource interface {
	commands(tick uint64) ([]lockstep.Command, error)
}

// checkpoint writes one line of hashes.
func checkpoint(out io.Writer, w *colony.World) {
	var b strings.Builder
	fmt.Fprintf(&b, "tick=%d world=%016x", w.Tick(), w.WorldHash())
	for _, id := range w.MapIDs() {
		h, _ := w.MapHash(id)
		fmt.Fprintf(&b, " map%d=%016x", id, h)
	}
	b.WriteByte('\n')
	io.WriteString(out, b.String())
}

// generator derives the command log from its own PCG generator and the
// world's state.
type generator struct {
	r      *rand.Rand
	w      *colony.World
	things []colony.ThingType
	maps   int
	side   int
}

func newGenerator(cfg config, w *colony.World) *generator {
	return &generator{
		r:      rand.New(rand.NewPCG(cfg.Seed, 0xDE7C4EC4C0FFEE01)),
		w:      w,
		things: w.Content().Things,
		maps:   cfg.Maps,
		side:   cfg.Side,
	}
}

// intn returns a value in [0, n) for n >= 1. It reduces a raw 64-bit
// draw with a 64x64->128-bit multiply, the same on every architecture,
// rather than rely on the generator's own range reduction (which takes a
// different code path on 32-bit machines).
func (g *generator) intn(n int) int {
	hi, _ := bits.Mul64(g.r.Uint64(), uint64(n))
	return int(hi)
}

// commands returns the commands for one tick: none on about two ticks in
// three, now and then several.
func (g *generator) commands(uint64) ([]lockstep.Command, error) {
	if g.intn(3) != 0 {
		return nil, nil
	}
	n := 1
	if g.intn(8) == 0 {
		n += 1 + g.intn(3)
	}
	cmds := make([]lockstep.Command, 0, n)
	for range n {
		switch k := g.intn(100); {
		case k < 40:
			cmds = append(cmds, g.spawn())
		case k < 80:
			cmds = append(cmds, g.move())
		default:
			cmds = append(cmds, g.invalid())
		}
	}
	return cmds, nil
}

// passableCell picks a random cell of the map, retrying a few times to
// find a passable one (it may return an impassable cell).
func (g *generator) passableCell(m int32) (x, y int) {
	for range 16 {
		x, y = g.intn(g.side), g.intn(g.side)
		if g.w.Passable(m, x, y) {
			break
		}
	}
	return x, y
}

// nearCell picks a random cell within 20 cells of x, y, clamped to the
// map, retrying a few times to find a passable one.
func (g *generator) nearCell(m int32, cx, cy int) (x, y int) {
	for range 16 {
		x = min(g.side-1, max(0, cx+g.intn(41)-20))
		y = min(g.side-1, max(0, cy+g.intn(41)-20))
		if g.w.Passable(m, x, y) {
			break
		}
	}
	return x, y
}

// spawn is a spawn of a random thing at a random cell, sometimes with a
// stack too big for the thing.
func (g *generator) spawn() lockstep.Command {
	m := int32(g.intn(g.maps))
	t := g.things[g.intn(len(g.things))]
	x, y := g.passableCell(m)
	count := 1 + g.intn(t.StackLimit)
	if g.intn(20) == 0 {
		count = t.StackLimit + 1 + g.intn(5)
	}
	return colony.SpawnThing(m, t.Name, x, y, count)
}

// move orders a random pawn to a cell near it or anywhere on its map.
func (g *generator) move() lockstep.Command {
	m := int32(g.intn(g.maps))
	pawns := g.w.Pawns(m)
	if len(pawns) == 0 {
		x, y := g.passableCell(m)
		return colony.MovePawn(m, 1<<20, x, y)
	}
	p := pawns[g.intn(len(pawns))]
	var x, y int
	if g.intn(2) == 0 {
		x, y = g.nearCell(m, p.X, p.Y)
	} else {
		x, y = g.passableCell(m)
	}
	return colony.MovePawn(m, p.ID, x, y)
}

// invalid is a command that World.Apply should refuse (a few variants,
// such as a move to an impassable cell, may happen to be valid).
func (g *generator) invalid() lockstep.Command {
	m := int32(g.intn(g.maps))
	thing := g.things[g.intn(len(g.things))].Name
	switch g.intn(12) {
	case 0: // unknown map
		return colony.SpawnThing(int32(g.maps+g.intn(3)), thing, 1, 1, 1)
	case 1: // world scope
		c := g.move()
		c.MapID = lockstep.WorldScope
		return c
	case 2: // spawn outside the map
		return colony.SpawnThing(m, thing, g.side+g.intn(10), g.intn(g.side), 1)
	case 3: // move outside the map
		c := g.move()
		args, err := colony.DecodeMovePawn(c.Payload)
		if err != nil {
			return c
		}
		return colony.MovePawn(m, args.PawnID, g.intn(g.side), g.side+g.intn(10))
	case 4: // unknown thing
		x, y := g.passableCell(m)
		return colony.SpawnThing(m, "NoSuchThing", x, y, 1)
	case 5: // unknown pawn
		x, y := g.passableCell(m)
		return colony.MovePawn(m, int32(1<<20+g.intn(1000)), x, y)
	case 6: // impassable target, when one is found
		pawns := g.w.Pawns(m)
		id := int32(1)
		if len(pawns) > 0 {
			id = pawns[g.intn(len(pawns))].ID
		}
		x, y := 0, 0
		for range 32 {
			x, y = g.intn(g.side), g.intn(g.side)
			if !g.w.Passable(m, x, y) {
				break
			}
		}
		return colony.MovePawn(m, id, x, y)
	case 7: // garbage payload
		kind := colony.CmdSpawnThing + uint16(g.intn(2))
		p := make([]byte, g.intn(9))
		for i := range p {
			p[i] = byte(g.intn(256))
		}
		return lockstep.Command{MapID: m, Kind: kind, Payload: p}
	case 8: // unknown kind
		c := g.spawn()
		c.Kind = 3 + uint16(g.intn(100))
		return c
	case 9: // engine kind
		return lockstep.Command{MapID: m, Kind: lockstep.KindSetSpeed, Payload: []byte{byte(g.intn(4))}}
	case 10: // negative coordinate
		return colony.SpawnThing(m, thing, -1-g.intn(5), g.intn(g.side), 1)
	default: // zero count
		x, y := g.passableCell(m)
		return colony.SpawnThing(m, thing, x, y, 0)
	}
}

// Command log format.
const logHeader = "# detcheck command log v1"

func writeLogLine(w io.Writer, c lockstep.Command) {
	p := "-"
	if len(c.Payload) > 0 {
		p = hex.EncodeToString(c.Payload)
	}
	fmt.Fprintf(w, "%d %d %d %s\n", c.Tick, c.MapID, c.Kind, p)
}

// replay reads a command log tick by tick.
type replay struct {
	f    *os.File
	sc   *bufio.Scanner
	line int
	next *lockstep.Command // first command not yet returned
	err  error
}

func openReplay(cfg config) (*replay, error) {
	f, err := os.Open(cfg.Replay)
	if err != nil {
		return nil, err
	}
	rp := &replay{f: f, sc: bufio.NewScanner(f)}
	rp.sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	if rp.sc.Scan() {
		rp.line++
		want := fmt.Sprintf("%s seed=%d maps=%d side=%d", logHeader, cfg.Seed, cfg.Maps, cfg.Side)
		if got := rp.sc.Text(); got != want {
			f.Close()
			if strings.HasPrefix(got, logHeader) {
				return nil, fmt.Errorf("%s: log is for %q, run is for %q (pass the same -seed, -maps and -side)",
					cfg.Replay, strings.TrimPrefix(got, logHeader+" "), strings.TrimPrefix(want, logHeader+" "))
			}
			return nil, fmt.Errorf("%s: not a detcheck command log (first line %q)", cfg.Replay, got)
		}
	} else {
		f.Close()
		if err := rp.sc.Err(); err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("%s: empty command log", cfg.Replay)
	}
	rp.advance()
	return rp, nil
}

func (rp *replay) close() { rp.f.Close() }

// advance reads the next command into rp.next (nil at the end).
func (rp *replay) advance() {
	rp.next = nil
	for rp.err == nil && rp.sc.Scan() {
		rp.line++
		s := strings.TrimSpace(rp.sc.Text())
		if s == "" || strings.HasPrefix(s, "#") {
			continue
		}
		c, err := parseLogLine(s)
		if err != nil {
			rp.err = fmt.Errorf("line %d: %w", rp.line, err)
			return
		}
		rp.next = &c
		return
	}
	if rp.err == nil {
		rp.err = rp.sc.Err()
	}
}

// commands returns the logged commands of tick t, in log order.
func (rp *replay) commands(t uint64) ([]lockstep.Command, error) {
	var cmds []lockstep.Command
	for rp.err == nil && rp.next != nil && rp.next.Tick <= t {
		if rp.next.Tick < t {
			rp.err = fmt.Errorf("line %d: command for tick %d after tick %d (the log must be in tick order)", rp.line, rp.next.Tick, t)
			break
		}
		cmds = append(cmds, *rp.next)
		rp.advance()
	}
	if rp.err != nil {
		return nil, fmt.Errorf("%s: %w", rp.f.Name(), rp.err)
	}
	return cmds, nil
}

func parseLogLine(s string) (lockstep.Command, error) {
	f := strings.Fields(s)
	if len(f) != 4 {
		return lockstep.Command{}, fmt.Errorf("want 4 fields (tick map kind payload), got %d", len(f))
	}
	tick, err := strconv.ParseUint(f[0], 10, 64)
	if err != nil {
		return lockstep.Command{}, fmt.Errorf("tick: %w", err)
	}
	m, err := strconv.ParseInt(f[1], 10, 32)
	if err != nil {
		return lockstep.Command{}, fmt.Errorf("map: %w", err)
	}
	kind, err := strconv.ParseUint(f[2], 10, 16)
	if err != nil {
		return lockstep.Command{}, fmt.Errorf("kind: %w", err)
	}
	var payload []byte
	if f[3] != "-" {
		if payload, err = hex.DecodeString(f[3]); err != nil {
			return lockstep.Command{}, fmt.Errorf("payload: %w", err)
		}
	}
	return lockstep.Command{Tick: tick, MapID: int32(m), Kind: uint16(kind), Payload: payload}, nil
}
