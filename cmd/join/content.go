package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/lockhost/lockhost/cmd/internal/cliutil"
	"github.com/lockhost/lockhost/modsync"
	"github.com/urfave/cli/v2"
)

// contentCacheFlagName is the flag that names the content cache, for
// "join content" and for joining with fetched content alike; both take
// it from contentCacheFlag and read it with contentCacheDir.
const contentCacheFlagName = "content-cache"

// contentCacheFlag is --content-cache DIR.
func contentCacheFlag() cli.Flag {
	return &cli.StringFlag{
		Name: contentCacheFlagName,
		Usage: "the content cache `DIR`: files fetched from hosts, by hash, shared by every host " +
			"(default: lockhost/content in your user cache folder)",
	}
}

// contentCacheDir is --content-cache, or the default cache folder.
func contentCacheDir(c *cli.Context) (string, error) {
	if dir := c.String(contentCacheFlagName); dir != "" {
		return dir, nil
	}
	return modsync.DefaultCacheDir()
}

// openContentCache opens the cache --content-cache names.
func openContentCache(c *cli.Context) (*modsync.Cache, error) {
	dir, err := contentCacheDir(c)
	if err != nil {
		return nil, err
	}
	return modsync.OpenCache(dir)
}

// exitDamaged is "join content verify"'s code when it found (and
// removed) damaged files.
const exitDamaged = 3

func contentCommand() *cli.Command {
	flags := func(more ...cli.Flag) []cli.Flag { return append([]cli.Flag{contentCacheFlag()}, more...) }
	return &cli.Command{
		Name:  "content",
		Usage: "list, check or trim the cache of mod files fetched from hosts",
		Description: "Mod files a host shares are fetched by their SHA-256 into one cache shared by every host,\n" +
			"and loaded from there: your own mod folders are never written. These commands work offline.",
		Subcommands: []*cli.Command{
			{
				Name:  "ls",
				Usage: "list the cached files: hash, size, when last used, and the mod files they are",
				Description: "One line a file: its SHA-256, its size in bytes, when a join last used it (or when it was\n" +
					"fetched) in UTC, and the mod files it is (package ID, version: path) as far as the\n" +
					"manifests the cache remembers say; then the count and total. --json prints one object.",
				Flags:  flags(&cli.BoolFlag{Name: "json", Usage: "print the list as JSON"}),
				Action: contentList,
			},
			{
				Name:  "verify",
				Usage: "hash every cached file again and remove those whose bytes changed",
				Description: "Reads every cached file and checks its SHA-256 against its name; a damaged file is\n" +
					"removed (it is fetched again when a host needs it) and named. Needs no network.\n\n" +
					"Exit status: 0 every file is sound, " + strconv.Itoa(exitDamaged) + " damaged files were found and removed,\n" +
					"1 the cache could not be read.",
				Flags:  flags(),
				Action: contentVerify,
			},
			{
				Name:  "prune",
				Usage: "remove the cached files no join used lately",
				Description: "Removes the files no join used for longer than --older-than, unfinished downloads as old,\n" +
					"and the mod folders laid out from the cache (laid out again when needed), then prints\n" +
					"how many files and bytes were removed. Run it while no join is fetching into the cache.",
				Flags: flags(&cli.StringFlag{Name: "older-than", Value: "30d",
					Usage: "remove files unused for longer than `AGE`: a duration such as 12h or 90m, or days such as 30d; 0 removes every file"}),
				Action: contentPrune,
			},
		},
	}
}

// cachedFile is one line of "join content ls".
type cachedFile struct {
	Hash     string    `json:"sha256"`
	Size     int64     `json:"size"`
	LastUsed time.Time `json:"last_used"`
	Mods     []string  `json:"mods"`
}

// noContentArgs refuses arguments to "join content SUB".
func noContentArgs(c *cli.Context, sub string) error {
	if c.NArg() != 0 {
		return cliutil.Usagef("join content %s takes no arguments, got %q", sub, c.Args().First())
	}
	return nil
}

// listContentCache is what "join content ls" and "verify" start with:
// no arguments, the cache opened, and its files.
func listContentCache(c *cli.Context, sub string) (*modsync.Cache, []modsync.Entry, error) {
	if err := noContentArgs(c, sub); err != nil {
		return nil, nil, err
	}
	cache, err := openContentCache(c)
	if err != nil {
		return nil, nil, err
	}
	list, err := cache.List()
	if err != nil {
		return nil, nil, err
	}
	return cache, list, nil
}

func contentList(c *cli.Context) error {
	cache, list, err := listContentCache(c, "ls")
	if err != nil {
		return err
	}
	owners, oerr := cache.Owners() // a damaged remembered manifest only costs names
	files := make([]cachedFile, 0, len(list))
	var total int64
	for _, e := range list {
		f := cachedFile{Hash: e.Hash.String(), Size: e.Size, LastUsed: e.ModTime.UTC().Truncate(time.Second), Mods: []string{}}
		for _, o := range owners[e.Hash] {
			f.Mods = append(f.Mods, o.String())
		}
		files = append(files, f)
		total += e.Size
	}
	w := cliutil.Out(c)
	if c.Bool("json") {
		b, err := json.MarshalIndent(struct {
			Dir   string       `json:"dir"`
			Files []cachedFile `json:"files"`
			Bytes int64        `json:"bytes"`
		}{cache.Dir(), files, total}, "", "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(w, "%s\n", b)
		return err
	}
	writeCachedFiles(w, files)
	fmt.Fprintf(w, "%d file(s), %s (%d bytes) in %s\n", len(files), size(uint64(total)), total, cache.Dir())
	if oerr != nil {
		fmt.Fprintln(cliutil.ErrOut(c), "warning:", oerr)
	}
	return nil
}

// writeCachedFiles prints one line a file.
func writeCachedFiles(w io.Writer, files []cachedFile) {
	for _, f := range files {
		mods := "(no remembered mod)"
		if len(f.Mods) > 0 {
			mods = strings.Join(f.Mods, "; ")
		}
		fmt.Fprintf(w, "%s %10d %s  %s\n", f.Hash, f.Size, f.LastUsed.Format("2006-01-02 15:04"), mods)
	}
}

func contentVerify(c *cli.Context) error {
	cache, list, err := listContentCache(c, "verify")
	if err != nil {
		return err
	}
	bad, err := cache.Verify()
	w := cliutil.Out(c)
	for _, s := range bad {
		fmt.Fprintf(w, "removed %s: its bytes no longer have this hash (it will be fetched again when needed)\n", s)
	}
	if err != nil {
		return err
	}
	var total int64
	for _, e := range list {
		total += e.Size
	}
	fmt.Fprintf(w, "verified %d file(s), %d bytes in %s: %d damaged\n", len(list), total, cache.Dir(), len(bad))
	if len(bad) > 0 {
		return cli.Exit("", exitDamaged)
	}
	return nil
}

func contentPrune(c *cli.Context) error {
	if err := noContentArgs(c, "prune"); err != nil {
		return err
	}
	age, err := parseAge(c.String("older-than"))
	if err != nil {
		return err
	}
	cache, err := openContentCache(c)
	if err != nil {
		return err
	}
	var cutoff time.Time // zero: every file, whatever its age
	if age > 0 {
		cutoff = time.Now().Add(-age)
	}
	n, freed, err := cache.Prune(nil, cutoff)
	if err != nil {
		return err
	}
	fmt.Fprintf(cliutil.Out(c), "pruned %d file(s), %s (%d bytes) from %s\n", n, size(uint64(freed)), freed, cache.Dir())
	return nil
}

// parseAge reads --older-than: a Go duration (12h, 90m) or whole days
// (30d); 0 is every file.
func parseAge(s string) (time.Duration, error) {
	bad := cliutil.Usagef("--older-than %q: give an age such as 30d, 12h or 90m (0: every file)", s)
	if days, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.ParseUint(days, 10, 16)
		if err != nil {
			return 0, bad
		}
		return time.Duration(n) * 24 * time.Hour, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, bad
	}
	return d, nil
}
