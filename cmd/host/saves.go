package main

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"text/tabwriter"
	"time"

	"github.com/lockhost/lockhost/cmd/internal/cliutil"
	"github.com/lockhost/lockhost/cmd/internal/contentcli"
	"github.com/lockhost/lockhost/defs"
	"github.com/lockhost/lockhost/game/colony"
	gamecontent "github.com/lockhost/lockhost/game/content"
	"github.com/lockhost/lockhost/game/hostcontent"
	"github.com/lockhost/lockhost/host"
	"github.com/lockhost/lockhost/internal/hugeheap"
	"github.com/lockhost/lockhost/internal/savelock"
	"github.com/lockhost/lockhost/saves"
	"github.com/lockhost/lockhost/snapshot"
	"github.com/urfave/cli/v2"
)

// worldFlags are the flags that describe a new world.
func worldFlags() []cli.Flag {
	return []cli.Flag{
		&cli.IntFlag{Name: "maps", Value: colony.DefaultMaps, Usage: "maps in a new world"},
		&cli.IntFlag{Name: "map-size", Value: colony.DefaultWidth, Usage: "width and height of each map, in cells"},
		&cli.Uint64Flag{Name: "seed", Value: 1, Usage: "seed of a new world"},
		&cli.IntFlag{Name: "things-per-map", Value: colony.DefaultThingsPerMap, Usage: "things scattered on each map of a new world"},
		&cli.IntFlag{Name: "pawns-per-map", Value: colony.DefaultPawnsPerMap, Usage: "pawns on each map of a new world"},
		&cli.IntFlag{Name: "idle-maps", Usage: "maps, the highest-numbered, that get no pawns"},
		&cli.IntFlag{Name: "world-mib", Value: -1, Usage: "generate a world of about this many MiB of raw state (chooses maps, map size and things; overrides those flags)"},
	}
}

// newWorld generates the world the flags describe. A generation that
// takes long logs how far it is, about every progressEvery.
func newWorld(c *cli.Context, bundle *gamecontent.Bundle, log *slog.Logger) (*colony.World, colony.Config, error) {
	side := c.Int("map-size")
	wcfg := colony.Config{Maps: c.Int("maps"), Width: side, Height: side, Seed: c.Uint64("seed"),
		ThingsPerMap: c.Int("things-per-map"), PawnsPerMap: c.Int("pawns-per-map"), IdleMaps: c.Int("idle-maps")}
	if mib := c.Int("world-mib"); mib > 0 {
		wcfg = colony.SizedConfig(int64(mib)<<20, c.Uint64("seed"))
		wcfg.IdleMaps = c.Int("idle-maps")
	}
	if err := wcfg.Validate(); err != nil {
		return nil, wcfg, cliutil.Usagef("world: %v", err)
	}
	prepareMemory(log, wcfg.RawEstimate())
	start := time.Now()
	last := start
	progress := func(done, total int) {
		if now := time.Now(); now.Sub(last) >= progressEvery && done < total {
			last = now
			log.Info("generating the world", "maps_done", done, "maps", total, "percent", 100*done/total,
				"s", int(now.Sub(start).Seconds()))
		}
	}
	w, err := colony.NewWithProgress(bundle.Content, wcfg, progress)
	if err != nil {
		return nil, wcfg, fmt.Errorf("generate world: %w", err)
	}
	return w, wcfg, nil
}

// compressionFlag chooses the codec of join points, repairs and saves.
func compressionFlag() cli.Flag {
	return &cli.StringFlag{Name: "compression", Value: host.DefaultConfig().Join.Compression,
		Usage: "codec of join points, repairs and saves, " + snapshot.CodecNames() +
			", with an optional level (zstd:10); joiners that read only gzip get gzip"}
}

// progressEvery is how often a long world generation says how far it is.
const progressEvery = 2 * time.Second

func savesCommand() *cli.Command {
	newFlags := append([]cli.Flag{
		&cli.StringFlag{Name: "out", Aliases: []string{"o"}, Required: true, Usage: "save `FILE` to write; an existing file is refused (exit 2) without --force"},
		&cli.BoolFlag{Name: "force", Usage: "replace an existing --out file"},
		&cli.StringFlag{Name: "game-name", Value: host.DefaultConfig().GameName, Usage: "session name stored in the save"},
		compressionFlag(),
	}, worldFlags()...)
	newFlags = append(newFlags, contentcli.Flags()...)
	return &cli.Command{
		Name:  "saves",
		Usage: "create, list and inspect save files",
		Subcommands: []*cli.Command{
			{
				Name:      "new",
				Usage:     "generate a world and write it as a save",
				UsageText: "host saves new --out FILE [--force] [world flags]",
				Flags:     withRanges(newFlags),
				Action:    savesNew,
			},
			{
				Name:      "list",
				Usage:     "list the saves in a folder from their headers: name, game, tick, size, time, header ok or not (inspect checks every byte)",
				ArgsUsage: "DIR",
				Action:    savesList,
			},
			{
				Name:      "inspect",
				Usage:     "check a save completely and show its header and maps",
				ArgsUsage: "FILE",
				Action:    savesInspect,
			},
		},
	}
}

func savesNew(c *cli.Context) error {
	if err := checkNumbers(c); err != nil {
		return err
	}
	path := c.String("out")
	if _, err := os.Lstat(path); err == nil && !c.Bool("force") {
		return cliutil.Usagef("%s exists; add --force to replace it", path)
	}
	if err := checkWritable(filepath.Dir(path)); err != nil {
		return cliutil.Usagef("--out %s: %v", path, err)
	}
	if err := savelock.Check(path); err != nil {
		return startFailed("--out: %v", err) // --force must not replace a running host's save
	}
	bundle, err := contentcli.FromFlags(c)
	if err != nil {
		return err
	}
	start := time.Now()
	w, wcfg, err := newWorld(c, bundle, slog.New(slog.NewTextHandler(cliutil.ErrOut(c), nil)))
	if err != nil {
		return err
	}
	gen := time.Since(start)
	start = time.Now()
	comp, err := snapshot.ParseCompression(c.String("compression"))
	if err != nil {
		return cliutil.Usagef("--compression: %v", err)
	}
	point, err := snapshot.Build(w, snapshot.BuildOptions{Compression: comp})
	if err != nil {
		return err
	}
	body, err := snapshot.NewPayload(point, 0, w.Tick(), nil)
	if err != nil {
		return err
	}
	meta := hostcontent.SaveMeta(bundle, c.String("game-name"))
	meta.Created = time.Now().Unix()
	if err := saves.Write(path, meta, body); err != nil {
		return err
	}
	fmt.Fprintf(cliutil.Out(c), "wrote %s: %d maps of %dx%d, %.1f MiB raw, %.1f MiB on disk; generated in %s, saved in %s\n",
		path, wcfg.Maps, wcfg.Width, wcfg.Height, float64(point.RawSize())/(1<<20), float64(body.Total())/(1<<20),
		gen.Round(time.Millisecond), time.Since(start).Round(time.Millisecond))
	return nil
}

func savesList(c *cli.Context) error {
	if c.NArg() != 1 {
		return cliutil.Usagef("give the folder: host saves list DIR")
	}
	infos, err := saves.List(c.Args().First())
	if err != nil {
		return err
	}
	w := cliutil.Out(c)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tGAME\tTICK\tSIZE\tSAVED\tHEADER")
	bad := 0
	for _, in := range infos {
		valid := "ok"
		if in.Err != nil {
			valid, bad = "NO: "+in.Err.Error(), bad+1
		}
		when := "-"
		if in.Meta.Created > 0 {
			when = time.Unix(in.Meta.Created, 0).Format("2006-01-02 15:04:05")
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%.1f MiB\t%s\t%s\n", in.Path, in.Meta.GameName, in.Meta.Tick, float64(in.Size)/(1<<20), when, valid)
	}
	tw.Flush()
	if len(infos) == 0 {
		fmt.Fprintln(w, "no saves")
	}
	if bad > 0 {
		return cli.Exit("", 1)
	}
	return nil
}

func savesInspect(c *cli.Context) error {
	if c.NArg() != 1 {
		return cliutil.Usagef("give the save: host saves inspect FILE")
	}
	path := c.Args().First()
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("no save at %s", path)
	}
	start := time.Now()
	in := saves.Inspect(path)
	if errors.Is(in.Err, saves.ErrNotSave) {
		return fmt.Errorf("%s is not a lockhost save", path)
	}
	if in.Err != nil {
		return fmt.Errorf("%s is not a valid save: %w", path, in.Err)
	}
	m := in.Meta
	w := cliutil.Out(c)
	fmt.Fprintf(w, "%s: valid, every byte checked (in %s)\n", path, time.Since(start).Round(time.Millisecond))
	fmt.Fprintf(w, "game %q, game version %s, tick %d, saved %s, %.1f MiB\n", m.GameName, m.GameVersion, m.Tick,
		time.Unix(m.Created, 0).Format(time.RFC3339), float64(in.Size)/(1<<20))
	fmt.Fprintf(w, "mods: %v\n", m.Mods)
	for _, d := range m.Databases {
		fmt.Fprintf(w, "  %-24s %5d defs  %016x\n", d.Type, d.Count, d.Hash)
	}
	var raw, comp uint64
	for _, mp := range in.Maps {
		fmt.Fprintf(w, "map %3d: %10d bytes raw, %9d compressed, state hash %016x\n", mp.ID, mp.RawSize, mp.Size, mp.StateHash)
		raw, comp = raw+mp.RawSize, comp+mp.Size
	}
	fmt.Fprintf(w, "%d maps: %.1f MiB raw, %.1f MiB compressed\n", len(in.Maps), float64(raw)/(1<<20), float64(comp)/(1<<20))
	return nil
}

// sameContent refuses a save made with other def databases than the
// content the host runs: its world would not mean the same things.
func sameContent(m saves.Meta, bundle *gamecontent.Bundle) error {
	if diff := differingDatabases(bundle.Summary(), m.Databases); len(diff) > 0 {
		return fmt.Errorf("it was made with other content (def databases that differ: %v); run with the same --content as when it was saved", diff)
	}
	return nil
}

// differingDatabases lists, sorted, the types of the def databases in
// which saved differs from content: those defs.Compare does not find
// equal, those content has and saved lacks, and those saved lists twice.
func differingDatabases(content []defs.Summary, saved []saves.DefSummary) []string {
	ss := make([]defs.Summary, len(saved))
	for i, d := range saved {
		ss[i] = defs.Summary{Type: d.Type, Count: d.Count, Hash: d.Hash}
	}
	seen := make(map[string]bool, len(saved))
	var diff []string
	for i, st := range defs.Compare(content, ss) {
		t := saved[i].Type
		if st != defs.StatusOK || seen[t] {
			diff = append(diff, t)
		}
		seen[t] = true
	}
	for _, d := range content {
		if !seen[d.Type] {
			diff = append(diff, d.Type)
		}
	}
	slices.Sort(diff)
	return slices.Compact(diff)
}

// prepareMemory readies the heap for a world whose raw encoding takes
// about raw bytes, before it is generated or loaded: on Linux, where the
// kernel leaves huge pages to programs that ask, it asks
// (internal/hugeheap). The host then takes a few thousand page faults
// instead of one per 4 KiB (a 204 MiB world's generation went from 3.2
// to 2.7 s in a virtual machine). The running host holds about twice the
// raw encoding: the world, a join point's clone being encoded and its
// compressed blobs.
func prepareMemory(log *slog.Logger, raw int64) {
	n := 2 * uint64(max(0, raw))
	log.Debug("huge pages for the world's memory", "bytes", n, "asked", hugeheap.Prepare(n))
}
