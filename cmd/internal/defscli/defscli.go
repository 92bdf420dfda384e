// Package defscli is the "defs" command: scan content folders, export
// manifests and show exactly how two content sets differ, offline.
package defscli

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/lockhost/lockhost/cmd/internal/cliutil"
	"github.com/lockhost/lockhost/defs"
	"github.com/lockhost/lockhost/modsync"
	"github.com/urfave/cli/v2"
)

// Exit codes of the defs subcommands.
const (
	ExitOK        = 0 // scan/export: no errors; diff: both sides read completely and the same
	ExitDifferent = 1 // scan/export: content has errors; diff: different
	ExitError     = 2 // the command could not run (or was called wrongly)
	// ExitIncomplete is diff's answer when no difference was found but a
	// side has content it could not compare (scan errors, defs whose
	// parent is not in the scan), or when whether the sides differ turns
	// on mods neither scanned nor declared.
	ExitIncomplete = 3
)

const contentHelp = `CONTENT is a mod folder (one holding About/About.xml) or a folder whose
subfolders are mods, loaded in lexical order of their names. Several CONTENT
arguments are loaded in the order given. With --mods-config, the load order
comes from that ModsConfig.xml and the CONTENT arguments are the folders to
find the mods in (each a mod folder or a folder of mods).`

const versionHelp = `Each mod is read from the folders RimWorld loads for the game version
(--game-version, default ` + defs.DefaultGameVersion + `, the newest lockhost knows; host serve and join
pick the same folders): with a LoadFolders.xml, its entry for the version,
else for the highest version below it that the file lists, else its
<default> entry; without one, the mod root, Common/ and the version folder
(1.6), or when that folder is missing the highest version folder below the
game version, or the lowest above it when all are newer. The version and
the folders of each mod are printed to standard error.`

func gameVersionFlag() cli.Flag {
	return &cli.StringFlag{Name: "game-version", Aliases: []string{"g"}, Value: defs.DefaultGameVersion, Usage: "game `VERSION` selecting version folders and LoadFolders.xml entries, e.g. 1.5"}
}

// gameVersion returns the --game-version flag's value after checking it.
func gameVersion(c *cli.Context) (string, error) {
	v := c.String("game-version")
	if err := defs.CheckGameVersion(v); err != nil {
		return "", cliutil.Usagef("--game-version: %v", err)
	}
	return v, nil
}

func modsConfigFlag() cli.Flag {
	return &cli.StringFlag{Name: "mods-config", Usage: "take the load order from this ModsConfig.xml; CONTENT arguments are the folders to search for mods"}
}

const activeHelp = `A def or list item with MayRequire="id1,id2" (all needed) or
MayRequireAnyOf="id1,id2" (one needed) is loaded only when those mods are
active, as in the game. The scanned mods are active; --active names the
DLCs and other mods active in the game (e.g. --active
Ludeon.RimWorld.Biotech,Ludeon.RimWorld.Royalty, or --active none), and
then every other mod counts as inactive; with --mods-config (scan and
export) its active mods are. Without either, a MayRequire naming a mod that was not scanned
cannot be decided: the def is kept as written and listed, and diff does
not say the sides are the same (exit 3).`

// activeNone is the --active value that declares no mod active besides
// the scanned ones (a package ID always has a dot, so it names no mod).
const activeNone = "none"

func activeFlag() cli.Flag {
	return &cli.StringSliceFlag{Name: "active", Usage: "package `IDS` of the DLCs and mods active in the game besides the scanned ones (comma-separated, repeatable; \"none\" for none): every other mod is then inactive for MayRequire"}
}

// activeOptions sets the MayRequire options from --active and, when
// given, the ModsConfig.xml's active mods.
func activeOptions(c *cli.Context, opts *defs.Options, modsConfig string) error {
	if c.IsSet("active") {
		opts.ActiveComplete = true
		for _, v := range c.StringSlice("active") {
			if v = strings.TrimSpace(v); v != "" && !strings.EqualFold(v, activeNone) {
				opts.Active = append(opts.Active, v)
			}
		}
	}
	if modsConfig != "" {
		ids, err := defs.ActiveMods(modsConfig)
		if err != nil {
			return err
		}
		opts.Active = append(opts.Active, ids...)
		opts.ActiveComplete = true
	}
	return nil
}

func warningsFlag() cli.Flag {
	return &cli.BoolFlag{Name: "warnings", Aliases: []string{"w"}, Usage: "list every warning (overridden defs, …) instead of counting them"}
}

// Command returns the "defs" command with its subcommands scan, export and
// diff. Errors are returned as cli.Exit errors carrying the exit codes
// documented in each subcommand's help.
func Command() *cli.Command {
	return &cli.Command{
		Name:  "defs",
		Usage: "scan, export and compare def databases offline",
		Subcommands: []*cli.Command{
			{
				Name:      "scan",
				Usage:     "scan content and print each def database's type, count and hash",
				ArgsUsage: "CONTENT...",
				Description: contentHelp + "\n\n" + versionHelp + "\n\n" + activeHelp + `

Errors and warnings in def files go to standard error, and so does the
list of defs whose parent is not in the scan (from Core or a DLC that was
not given): they are counted and hashed by their own XML. Exit status: 0
no errors, 1 the content has errors (the table is still printed), 2 the
command failed.`,
				Flags: []cli.Flag{
					gameVersionFlag(), modsConfigFlag(), activeFlag(), warningsFlag(),
					&cli.BoolFlag{Name: "json", Usage: "print JSON (hashes as 16 hex digits) instead of a table"},
				},
				Action: scanAction,
			},
			{
				Name:      "export",
				Usage:     "scan content and write its manifest (JSON) for a later diff",
				ArgsUsage: "CONTENT...",
				Description: contentHelp + "\n\n" + versionHelp + "\n\n" + activeHelp + `

Exit status: 0 no errors, 1 the content has errors (the manifest is still
written), 2 the command failed.`,
				Flags: []cli.Flag{
					gameVersionFlag(), modsConfigFlag(), activeFlag(), warningsFlag(),
					&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "manifest file to write (- for standard output)", Required: true},
					&cli.BoolFlag{Name: "elements", Usage: "also fingerprint each def's elements, so that a diff against the manifest names the first element that differs (a manifest about four times larger)"},
					&cli.BoolFlag{Name: "files", Usage: "also record each mod's data files (path, size, SHA-256) as content sync shares them, so that a diff of two such manifests names the files that differ"},
				},
				Action: exportAction,
			},
			{
				Name:        "diff",
				Usage:       "show which mods and defs differ between two content sets",
				ArgsUsage:   "A B",
				Description: diffHelp,
				Flags: []cli.Flag{
					gameVersionFlag(), activeFlag(), warningsFlag(),
					&cli.BoolFlag{Name: "json", Usage: "print the report as JSON"},
					&cli.BoolFlag{Name: "files", Usage: "also compare each mod's data files (path, size, SHA-256) as content sync shares them; on by itself when a side is a manifest exported with --files"},
				},
				Action: diffAction,
			},
		},
	}
}

// diffHelp is the description of "defs diff".
var diffHelp = `Each of A and B is either a manifest file written by "defs export" (any
regular file is read as a manifest) or content: a mod folder, a folder whose
subfolders are mods (lexical order), or several such folders joined with
"` + string(os.PathListSeparator) + `" (like PATH), loaded in that order.

Content sides are scanned with --game-version; if it is not given and the
other side is a manifest, the manifest's game version is used.

` + versionHelp + `

` + activeHelp + `

--active applies to both content sides; a manifest records the active set
it was checked against.

Each def whose content differs is named with its file (relative to its
mod) and, when both sides are content or manifests exported with
--elements, the first element that differs. When both sides are
manifests exported with --files, each data file that differs (by path,
size or SHA-256) is named too, and counts as a difference. With --files,
or when the other side is a manifest exported with --files, a content
side's data files are hashed for that comparison, so your own mod
folders can be compared file by file with a host's export.

Exit status:
  0  both sides were read completely and have the same mods and defs
  1  they differ (every difference is listed)
  2  the command failed (a side could not be read, a bad argument)
  3  no difference was found, but a side has content that could not be
     compared: defs whose parent is not in the scan (compared by their own
     XML, not by what the game would load; add the mod with the parent,
     usually Core or a DLC), defs whose MayRequire names a mod neither
     scanned nor declared (see --active) or def errors (those defs are
     not compared); or, when both sides are content, whether they differ
     turns on such a mod (each way is shown).

When both sides are content and some defs depend on at most ` + fmt.Sprint(defs.MaxDecideMods) + ` mods
neither scanned nor declared, the sides are compared again for each
combination of those mods being active or not: if the sides are the same
in every case, or differ in every case, that is the answer (exit 0 or 1).`

func fail(format string, args ...any) error {
	return cli.Exit("defs: "+fmt.Sprintf(format, args...), ExitError)
}

// expandContent turns CONTENT arguments into mod folders in load order.
func expandContent(args []string) ([]string, error) {
	var out []string
	for _, a := range args {
		st, err := os.Stat(a)
		if err != nil {
			return nil, err
		}
		if !st.IsDir() {
			return nil, fmt.Errorf("%s is not a folder", a)
		}
		if isMod(a) {
			out = append(out, a)
			continue
		}
		entries, err := os.ReadDir(a)
		if err != nil {
			return nil, err
		}
		n := 0
		for _, e := range entries { // ReadDir sorts by name
			p := filepath.Join(a, e.Name())
			if isDirPath(p) && isMod(p) {
				out = append(out, p)
				n++
			}
		}
		if n == 0 {
			return nil, fmt.Errorf("%s is neither a mod folder (no About/About.xml) nor a folder of mods", a)
		}
	}
	return out, nil
}

func isMod(dir string) bool {
	st, err := os.Stat(filepath.Join(dir, "About", "About.xml"))
	return err == nil && st.Mode().IsRegular()
}

func isDirPath(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}

// loadContent scans CONTENT arguments (or a mods config plus search
// folders).
func loadContent(c *cli.Context, args []string) (*defs.Set, error) {
	if len(args) == 0 {
		return nil, cliutil.Usagef("no CONTENT given")
	}
	gameVersion, err := gameVersion(c)
	if err != nil {
		return nil, err
	}
	var dirs []string
	cfg := c.String("mods-config")
	if cfg != "" {
		dirs, err = defs.LoadOrder(cfg, args)
	} else {
		dirs, err = expandContent(args)
	}
	if err != nil {
		return nil, err
	}
	opts := defs.Options{GameVersion: gameVersion}
	if err := activeOptions(c, &opts, cfg); err != nil {
		return nil, err
	}
	return defs.ScanDirs(dirs, opts)
}

// count says "1 def" or "n defs" for a regular noun.
func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// maxUnresolvedListed bounds the unresolved defs listed without --warnings.
const maxUnresolvedListed = 10

// reportIssues prints the game version and folders read, errors, defs
// with unresolved parents, and warnings (or their count) to ErrWriter.
func reportIssues(c *cli.Context, label string, s *defs.Set) {
	w := cliutil.ErrOut(c)
	prefix := ""
	if label != "" {
		prefix = label + ": "
	}
	fmt.Fprintf(w, "%sgame version %s\n", prefix, s.GameVersion)
	for _, m := range s.Mods {
		folders := make([]string, len(m.Folders))
		for i, f := range m.Folders {
			folders[i] = strings.TrimSuffix(f, ".") + "/"
		}
		fmt.Fprintf(w, "%smod %s: folders %s\n", prefix, m.PackageID, strings.Join(folders, ", "))
	}
	if n := len(s.Unresolved); n > 0 {
		fmt.Fprintf(w, "%s%d def(s) have a parent that is not in the scan (add the mod that has it, usually Core or a DLC); they are hashed by their own XML and the parent's name:\n", prefix, n)
		for i, d := range s.Unresolved {
			if i == maxUnresolvedListed && !c.Bool("warnings") {
				fmt.Fprintf(w, "%s  … and %d more; use --warnings to list them\n", prefix, n-i)
				break
			}
			fmt.Fprintf(w, "%s  [%s] %s:%d: %s %s: parent %q\n", prefix, d.Mod, d.File, d.Line, d.Type, d.Name, d.UnresolvedParent)
		}
	}
	if n := len(s.Skipped); n > 0 || s.SkippedItems > 0 {
		fmt.Fprintf(w, "%sMayRequire: %s and %s not loaded (a mod they need is not active)\n", prefix, count(n, "def"), count(s.SkippedItems, "list item"))
		if c.Bool("warnings") {
			for _, d := range s.Skipped {
				fmt.Fprintf(w, "%s  [%s] %s:%d: %s %s needs %s\n", prefix, d.Mod, d.File, d.Line, d.Type, d.Name, d.Requires)
			}
		}
	}
	if n := len(s.Undecided); n > 0 {
		verb := "depend"
		if n == 1 {
			verb = "depends"
		}
		fmt.Fprintf(w, "%s%s %s (MayRequire) on mods neither scanned nor declared with --active or --mods-config; kept as written:\n", prefix, count(n, "def"), verb)
		for i, d := range s.Undecided {
			if i == maxUnresolvedListed && !c.Bool("warnings") {
				fmt.Fprintf(w, "%s  … and %d more; use --warnings to list them\n", prefix, n-i)
				break
			}
			fmt.Fprintf(w, "%s  [%s] %s:%d: %s %s needs %s\n", prefix, d.Mod, d.File, d.Line, d.Type, d.Name, strings.Join(d.Undecided, ", "))
		}
	}
	for _, is := range s.Errors {
		fmt.Fprintf(w, "%serror: %s\n", prefix, is)
	}
	if c.Bool("warnings") {
		for _, is := range s.Warnings {
			fmt.Fprintf(w, "%swarning: %s\n", prefix, is)
		}
	} else if n := len(s.Warnings); n > 0 {
		fmt.Fprintf(w, "%s%d warning(s); use --warnings to list them\n", prefix, n)
	}
}

type scanJSON struct {
	GameVersion string           `json:"gameVersion"`
	Mods        []modJSON        `json:"mods"`
	Databases   []summaryJSON    `json:"databases"`
	Unresolved  []unresolvedJSON `json:"unresolved"`
	// Undecided and Skipped: MayRequire (see --active).
	Undecided []undecidedJSON `json:"undecided"`
	Skipped   []defs.Skipped  `json:"skipped"`
	Errors    []string        `json:"errors"`
	Warnings  []string        `json:"warnings"`
}

type modJSON struct {
	defs.ManifestMod
	Folders []string `json:"folders"`
}

type summaryJSON struct {
	Type  string      `json:"type"`
	Count int32       `json:"count"`
	Hash  defs.Hash64 `json:"hash"`
}

// contentErr turns a loading error into the command's error: usage
// errors stay usage errors, anything else is one sentence with exit 2.
func contentErr(what string, err error) error {
	var ue *cliutil.UsageError
	if errors.As(err, &ue) {
		return err
	}
	return fail("%s: %v", what, err)
}

type undecidedJSON struct {
	Type string   `json:"type"`
	Name string   `json:"name"`
	Mod  string   `json:"mod"`
	File string   `json:"file"`
	Line int      `json:"line"`
	Mods []string `json:"mods"` // the mods whose state is unknown
}

type unresolvedJSON struct {
	Type   string `json:"type"`
	Name   string `json:"name"`
	Mod    string `json:"mod"`
	File   string `json:"file"`
	Line   int    `json:"line"`
	Parent string `json:"parent"`
}

func scanAction(c *cli.Context) error {
	s, err := loadContent(c, c.Args().Slice())
	if err != nil {
		return contentErr("scan", err)
	}
	w := cliutil.Out(c)
	if c.Bool("json") {
		m := s.Manifest()
		j := scanJSON{GameVersion: s.GameVersion, Databases: []summaryJSON{}, Unresolved: []unresolvedJSON{}, Undecided: []undecidedJSON{}, Skipped: s.Skipped, Errors: []string{}, Warnings: []string{}}
		if j.Skipped == nil {
			j.Skipped = []defs.Skipped{}
		}
		for _, d := range s.Undecided {
			j.Undecided = append(j.Undecided, undecidedJSON{Type: d.Type, Name: d.Name, Mod: d.Mod, File: d.File, Line: d.Line, Mods: d.Undecided})
		}
		for i, mm := range m.Mods {
			j.Mods = append(j.Mods, modJSON{ManifestMod: mm, Folders: s.Mods[i].Folders})
		}
		for _, d := range s.Unresolved {
			j.Unresolved = append(j.Unresolved, unresolvedJSON{Type: d.Type, Name: d.Name, Mod: d.Mod, File: d.File, Line: d.Line, Parent: d.UnresolvedParent})
		}
		for _, x := range s.Summary() {
			j.Databases = append(j.Databases, summaryJSON{Type: x.Type, Count: x.Count, Hash: defs.Hash64(x.Hash)})
		}
		for _, is := range s.Errors {
			j.Errors = append(j.Errors, is.String())
		}
		for _, is := range s.Warnings {
			j.Warnings = append(j.Warnings, is.String())
		}
		b, err := json.MarshalIndent(j, "", "  ")
		if err != nil {
			return fail("scan: %v", err)
		}
		if _, err := fmt.Fprintf(w, "%s\n", b); err != nil {
			return fail("scan: %v", err)
		}
	} else {
		reportIssues(c, "", s)
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintf(tw, "TYPE\tCOUNT\tHASH\n")
		total := 0
		for _, x := range s.Summary() {
			fmt.Fprintf(tw, "%s\t%d\t%016x\n", x.Type, x.Count, x.Hash)
			total += int(x.Count)
		}
		if err := tw.Flush(); err != nil {
			return fail("scan: %v", err)
		}
		fmt.Fprintf(w, "%s, %s, %s (%d with a parent not in the scan, %d undecided), %d not loaded (MayRequire), %s, %s\n",
			count(len(s.Mods), "mod"), count(len(s.Databases), "database"), count(total, "def"), len(s.Unresolved), len(s.Undecided), len(s.Skipped), count(len(s.Errors), "error"), count(len(s.Warnings), "warning"))
	}
	if len(s.Errors) > 0 {
		return cli.Exit("", ExitDifferent)
	}
	return nil
}

func exportAction(c *cli.Context) error {
	s, err := loadContent(c, c.Args().Slice())
	if err != nil {
		return contentErr("export", err)
	}
	reportIssues(c, "", s)
	m := s.Manifest()
	if c.Bool("elements") {
		m = s.ManifestWithElements()
	}
	if c.Bool("files") {
		cm, err := modsync.Build(s, modsync.BuildOptions{})
		if err != nil {
			return fail("export: %v", err)
		}
		modsync.AddFiles(m, cm)
	}
	dest := c.String("output")
	if dest == "-" {
		if err := defs.WriteManifest(cliutil.Out(c), m); err != nil {
			return fail("export: %v", err)
		}
	} else if err := writeFileAtomic(dest, m); err != nil {
		return fail("export: %v", err)
	}
	if len(s.Errors) > 0 {
		return cli.Exit("", ExitDifferent)
	}
	return nil
}

// writeFileAtomic writes the manifest to a temporary file and renames it
// into place, so a failed export never leaves a half-written manifest.
func writeFileAtomic(dest string, m *defs.Manifest) error {
	f, err := os.CreateTemp(filepath.Dir(dest), ".manifest-*.tmp")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer os.Remove(tmp)
	if err := defs.WriteManifest(f, m); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, dest)
}

// side is one side of a diff.
type side struct {
	arg      string
	manifest *defs.Manifest // set when the side is a manifest file
	dirs     []string       // else the content folders
}

func openSide(arg string) (*side, error) {
	if arg == "" {
		return nil, errors.New("empty argument")
	}
	st, err := os.Stat(arg)
	if err == nil && st.Mode().IsRegular() {
		f, err := os.Open(arg)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		m, err := defs.ReadManifest(f)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", arg, err)
		}
		return &side{arg: arg, manifest: m}, nil
	}
	parts := filepath.SplitList(arg)
	parts = slices.DeleteFunc(parts, func(s string) bool { return s == "" })
	dirs, err := expandContent(parts)
	if err != nil {
		return nil, err
	}
	return &side{arg: arg, dirs: dirs}, nil
}

// scan scans the side's content, with the mods of on and off declared
// active and inactive besides what --active says.
func (s *side) scan(c *cli.Context, gameVersion string, on, off []string) (*defs.Set, error) {
	opts := defs.Options{GameVersion: gameVersion}
	if err := activeOptions(c, &opts, ""); err != nil {
		return nil, err
	}
	opts.Active = append(opts.Active, on...)
	opts.Inactive = off
	return defs.ScanDirs(s.dirs, opts)
}

// load returns the side's manifest and, for content, its scanned set.
func (s *side) load(c *cli.Context, label, gameVersion string) (*defs.Manifest, *defs.Set, error) {
	if s.manifest != nil {
		return s.manifest, nil, nil
	}
	set, err := s.scan(c, gameVersion, nil, nil)
	if err != nil {
		return nil, nil, err
	}
	reportIssues(c, label, set)
	// With elements, a diff against a manifest exported with --elements
	// names the first element that differs.
	return set.ManifestWithElements(), set, nil
}

func diffAction(c *cli.Context) error {
	if c.NArg() != 2 {
		return cliutil.Usagef("defs diff: want exactly two arguments A and B, got %d", c.NArg())
	}
	a, err := openSide(c.Args().Get(0))
	if err != nil {
		return fail("diff: A: %v", err)
	}
	b, err := openSide(c.Args().Get(1))
	if err != nil {
		return fail("diff: B: %v", err)
	}
	gv, err := gameVersion(c)
	if err != nil {
		return err
	}
	if !c.IsSet("game-version") {
		if a.manifest != nil {
			gv = a.manifest.GameVersion
		} else if b.manifest != nil {
			gv = b.manifest.GameVersion
		}
	}
	la, lb := "A ("+a.arg+")", "B ("+b.arg+")"
	ma, sa, err := a.load(c, "A", gv)
	if err != nil {
		return fail("diff: A: %v", err)
	}
	mb, sb, err := b.load(c, "B", gv)
	if err != nil {
		return fail("diff: B: %v", err)
	}
	withFiles, err := withContentFiles(c, la, lb, ma, mb, sa, sb)
	if err != nil {
		return err
	}
	var r *defs.Report
	if sa != nil && sb != nil {
		r, err = decideDiff(c, a, b, gv, defs.DiffSets(sa, sb)) // both scanned: the first differing element is known
		if err != nil {
			return fail("diff: %v", err)
		}
		if withFiles {
			r.Files = defs.Diff(ma, mb).Files // DiffSets compares the sets' own manifests, which list no files
		}
	} else {
		r = defs.Diff(ma, mb)
	}
	w := cliutil.Out(c)
	if c.Bool("json") {
		bs, err := json.MarshalIndent(struct {
			Same     bool `json:"same"`
			Complete bool `json:"complete"`
			*defs.Report
		}{r.Same(), r.Complete(), r}, "", "  ")
		if err != nil {
			return fail("diff: %v", err)
		}
		if _, err := fmt.Fprintf(w, "%s\n", bs); err != nil {
			return fail("diff: %v", err)
		}
	} else {
		r.WriteText(w, la, lb)
	}
	switch {
	case len(r.DependsOn) > 0:
		return cli.Exit("", ExitIncomplete)
	case !r.Same():
		return cli.Exit("", ExitDifferent)
	case !r.Complete():
		return cli.Exit("", ExitIncomplete)
	}
	return nil
}

// withContentFiles says whether the diff compares data files (--files,
// or a side exported with them) and, if so, hashes the content sides'.
func withContentFiles(c *cli.Context, la, lb string, ma, mb *defs.Manifest, sa, sb *defs.Set) (bool, error) {
	if !c.Bool("files") && !hasFiles(ma) && !hasFiles(mb) {
		return false, nil
	}
	if err := addContentFiles(ma, sa); err != nil {
		return false, fail("diff: A: %v", err)
	}
	if err := addContentFiles(mb, sb); err != nil {
		return false, fail("diff: B: %v", err)
	}
	noteNoFiles(c, la, ma)
	noteNoFiles(c, lb, mb)
	return true, nil
}

// hasFiles reports whether a manifest lists data files (exported with
// --files).
func hasFiles(m *defs.Manifest) bool {
	return slices.ContainsFunc(m.Mods, func(d defs.ManifestMod) bool { return len(d.Files) > 0 })
}

// addContentFiles records in m the data files of the scanned content set
// (nil for a manifest side, which keeps what it was exported with).
func addContentFiles(m *defs.Manifest, set *defs.Set) error {
	if set == nil {
		return nil
	}
	cm, err := modsync.Build(set, modsync.BuildOptions{})
	if err != nil {
		return err
	}
	modsync.AddFiles(m, cm)
	return nil
}

// noteNoFiles warns that a side lists no files, so its files cannot be
// compared.
func noteNoFiles(c *cli.Context, label string, m *defs.Manifest) {
	if !hasFiles(m) && len(m.Mods) > 0 {
		fmt.Fprintf(cliutil.ErrOut(c), "note: %s lists no data files (export it with --files), so files are not compared\n", label)
	}
}

// decideDiff answers, when it can, what r left undecided: defs that depend
// on undeclared mods. Both content sides are compared again with those
// mods active and inactive (see defs.DecideDiff).
func decideDiff(c *cli.Context, a, b *side, gameVersion string, r *defs.Report) (*defs.Report, error) {
	return defs.DecideDiff(r, func(on, off []string) (*defs.Report, error) {
		xa, err := a.scan(c, gameVersion, on, off)
		if err != nil {
			return nil, fmt.Errorf("side A: %w", err)
		}
		xb, err := b.scan(c, gameVersion, on, off)
		if err != nil {
			return nil, fmt.Errorf("side B: %w", err)
		}
		return defs.DiffSets(xa, xb), nil
	})
}
