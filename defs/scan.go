package defs

import (
	"fmt"
	"io/fs"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
)

// Def is one def of a database, with its content resolved.
type Def struct {
	Type, Name string
	Mod        string // packageId of the mod that provides it
	File       string // path within the mod
	Line       int
	Node       *Node  // resolved content
	Hash       uint64 // content hash of this def
	// UnresolvedParent names the parent (or further ancestor) that is not
	// in the scanned content, typically one from Core or a DLC that was
	// not scanned. Such a def is kept: Node is what could be resolved, with
	// a ParentName attribute naming the missing parent, so its hash covers
	// its own XML and that name but not what the game would inherit.
	UnresolvedParent string
	// Undecided lists the package IDs (in lower case, sorted) named by a
	// MayRequire or MayRequireAnyOf of this def or of one of its list
	// items whose mod is neither scanned nor declared active (see
	// Options.Active) while the active set is not complete: whether the
	// game loads the def, or those items, cannot be told. The def is kept
	// as written, those attributes included.
	Undecided []string
}

// Skipped is a def the game does not load because a mod its MayRequire or
// MayRequireAnyOf names is not active.
type Skipped struct {
	Type string `json:"type"`
	Name string `json:"name"`
	Mod  string `json:"mod"`
	File string `json:"file"`
	Line int    `json:"line"`
	// Requires is the def's MayRequire or MayRequireAnyOf value.
	Requires string `json:"requires"`
}

// Database is every def of one type.
type Database struct {
	Type string
	Defs []*Def // sorted by Name
	Hash uint64
}

// Count returns the number of defs in the database.
func (d *Database) Count() int {
	if d == nil {
		return 0
	}
	return len(d.Defs)
}

// Def returns the def with the given name, or nil.
func (d *Database) Def(name string) *Def {
	if d == nil {
		return nil
	}
	i, ok := slices.BinarySearchFunc(d.Defs, name, func(x *Def, n string) int { return strings.Compare(x.Name, n) })
	if !ok {
		return nil
	}
	return d.Defs[i]
}

// Issue is a warning or error found while scanning, located by mod, file
// and line where known.
type Issue struct {
	Mod, File string
	Line      int
	Msg       string
}

// String formats the issue as "[mod] file:line: message", omitting the
// parts that are unknown.
func (i Issue) String() string {
	var b strings.Builder
	if i.Mod != "" {
		b.WriteString("[" + i.Mod + "] ")
	}
	if i.File != "" {
		b.WriteString(i.File)
		if i.Line > 0 {
			fmt.Fprintf(&b, ":%d", i.Line)
		}
		b.WriteString(": ")
	}
	b.WriteString(i.Msg)
	return b.String()
}

// Set is a scanned content set: its mods in load order and the def
// databases they build.
type Set struct {
	GameVersion string
	Mods        []Mod
	Databases   []*Database // sorted by Type
	// Unresolved lists the defs of the databases whose parent is not in
	// the scan (see Def.UnresolvedParent), sorted by type and name.
	Unresolved []*Def
	// Undecided lists the defs whose MayRequire or MayRequireAnyOf (or
	// that of one of their list items) names a mod whose state is not
	// known (see Def.Undecided), sorted by type and name.
	Undecided []*Def
	// Skipped lists the defs not loaded because a mod they require is not
	// active, in load order; SkippedItems counts the list items dropped
	// for the same reason.
	Skipped      []Skipped
	SkippedItems int
	// Active is the set MayRequire was checked against: the package IDs of
	// the scanned mods and of Options.Active, in lower case, sorted.
	// ActiveComplete copies Options.ActiveComplete.
	Active         []string
	ActiveComplete bool
	Warnings       []Issue
	Errors         []Issue
}

// Complete reports whether every def was read and resolved as the game
// would: no errors, no unresolved parents and no MayRequire that could
// not be decided.
func (s *Set) Complete() bool {
	return len(s.Errors) == 0 && len(s.Unresolved) == 0 && len(s.Undecided) == 0
}

// Database returns the database of the given type, or nil.
func (s *Set) Database(typ string) *Database {
	i, ok := slices.BinarySearchFunc(s.Databases, typ, func(d *Database, t string) int { return strings.Compare(d.Type, t) })
	if !ok {
		return nil
	}
	return s.Databases[i]
}

// ModSource is one mod folder to scan.
type ModSource struct {
	FS  fs.FS  // rooted at the mod folder (the one holding About/)
	Dir string // display path, may be empty
}

// Options control a scan.
type Options struct {
	// GameVersion selects version folders and LoadFolders.xml entries,
	// e.g. "1.5"; empty means DefaultGameVersion.
	GameVersion string
	// Workers bounds the number of files parsed at once; 0 means
	// GOMAXPROCS.
	Workers int
	// Active lists the package IDs of the DLCs and mods active in the game
	// besides the scanned mods (compared case insensitively; a trailing
	// "_steam" is ignored, as the game does). A def or list item whose
	// MayRequire or MayRequireAnyOf is not met by the scanned mods and
	// these is not loaded, as in the game; LoadFolders.xml's IfModActive
	// sees them too.
	Active []string
	// ActiveComplete says that the scanned mods and Active are every mod
	// active in the game. When it is false, a MayRequire naming another
	// mod cannot be decided: the def or item is kept as written and listed
	// in Set.Undecided, and the set is not Complete.
	ActiveComplete bool
	// Inactive lists package IDs (compared as MayRequire writes them,
	// trimmed, case insensitively) to count as inactive even when
	// ActiveComplete is false; a scanned mod or one in Active stays
	// active. DecideDiff uses it to try each way an undecided mod can be.
	Inactive []string
}

// ScanDirs scans mod folders on disk, in load order.
func ScanDirs(dirs []string, opts Options) (*Set, error) {
	mods := make([]ModSource, len(dirs))
	for i, d := range dirs {
		st, err := os.Stat(d)
		if err != nil {
			return nil, fmt.Errorf("mod folder: %w", err)
		}
		if !st.IsDir() {
			return nil, fmt.Errorf("mod folder %s: not a directory", d)
		}
		mods[i] = ModSource{FS: os.DirFS(d), Dir: d}
	}
	return ScanFS(mods, opts)
}

// fileJob is one def file to parse.
type fileJob struct {
	idx  int // position in load order
	mod  int
	fsys fs.FS
	path string
	defs []rawDef
	iss  []fileIssue
}

// entry is one def element in load order.
type entry struct {
	raw  *rawDef
	job  *fileJob
	mod  int
	node *Node // resolved content (named entries: memoised)
	// defName is the resolved def's name (it may be inherited).
	defName string
	// missing is the name of a parent in e's ancestry that is not in the
	// scan; node then holds what could be resolved.
	missing string
	// unknown collects the package IDs of MayRequire conditions on the
	// def or its list items that could not be decided.
	unknown map[string]bool
	// loaded is node as the game loads it: MayRequire applied.
	loaded *Node
	// inherited collects the package IDs of undecided MayRequire
	// conditions on e's ancestors: whether the game registers them as
	// parents, and so what e inherits, depends on those mods.
	inherited []string
	// regUnknown lists the mods whose unknown state decides whether the
	// game registers e (a named entry) as a possible parent.
	regUnknown []string

	state uint8 // 0 unresolved, 1 resolving, 2 done, 3 failed
}

// ScanFS scans mods in load order and builds their def databases. It fails
// only when the input is unusable (a mod without a readable About.xml, a
// package ID used twice, an unreadable folder); problems inside def files
// are reported in Set.Errors and Set.Warnings.
func ScanFS(mods []ModSource, opts Options) (*Set, error) {
	s := &Set{GameVersion: GameVersionOrDefault(opts.GameVersion)}
	if err := CheckGameVersion(s.GameVersion); err != nil {
		return nil, err
	}
	log := &issueLog{set: s}
	if err := readMods(s, mods, log); err != nil {
		return nil, err
	}
	act := newActiveSet(s.Mods, opts)
	s.ActiveComplete = opts.ActiveComplete
	for id := range act.ids {
		s.Active = append(s.Active, id)
	}
	slices.Sort(s.Active)

	jobs, err := listJobs(s, mods, act.isActive, log)
	if err != nil {
		return nil, err
	}
	workers := opts.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	parseJobs(jobs, workers)

	// Everything below runs in load order, so results are deterministic.
	entries, named, gated := collectEntries(s, act, jobs, log)
	r := &resolver{log: log, named: named, gated: gated}
	concrete := loadConcrete(s, r, act, entries)
	out := buildDefs(s, keepWinners(s, concrete, log))
	hashDefs(out, workers)
	buildDatabases(s, out)
	log.finish()
	return s, nil
}

// readMods reads each mod's About.xml into s.Mods, deriving a package ID
// for a mod without one; a package ID used twice makes the input
// unusable.
func readMods(s *Set, mods []ModSource, log *issueLog) error {
	ids := map[string]int{}
	for i, src := range mods {
		if src.FS == nil {
			return fmt.Errorf("mod %d (%s): no file system", i, src.Dir)
		}
		m, _, err := readAbout(src.FS)
		if err != nil {
			return fmt.Errorf("mod %s: %w", modLabel(src, i), err)
		}
		m.Dir = src.Dir
		if m.PackageID == "" {
			m.PackageID, m.DerivedID = derivedPackageID(src, i), true
			log.add(false, i, -1, Issue{Mod: m.PackageID, File: "About/About.xml", Msg: fmt.Sprintf("no <packageId> (a mod from before packageId existed); using %q, derived from its folder name", m.PackageID)})
		}
		id := strings.ToLower(m.PackageID)
		if j, dup := ids[id]; dup {
			return fmt.Errorf("mod %s: packageId %s is also used by %s", modLabel(src, i), m.PackageID, modLabel(mods[j], j))
		}
		ids[id] = i
		s.Mods = append(s.Mods, m)
	}
	return nil
}

// listJobs picks each mod's folders for the game version and lists the
// def files in them, in load order.
func listJobs(s *Set, mods []ModSource, active func(string) bool, log *issueLog) ([]*fileJob, error) {
	var jobs []*fileJob
	for i, src := range mods {
		folders, fiss := selectFolders(src.FS, s.GameVersion, active)
		s.Mods[i].Folders = folders
		for _, fi := range fiss {
			log.add(fi.Fatal, i, -1, Issue{Mod: s.Mods[i].PackageID, File: fi.File, Line: fi.Line, Msg: fi.Msg})
		}
		files, err := listDefFiles(src.FS, folders)
		if err != nil {
			return nil, fmt.Errorf("mod %s: %w", modLabel(src, i), err)
		}
		for _, f := range files {
			jobs = append(jobs, &fileJob{idx: len(jobs), mod: i, fsys: src.FS, path: f.Path})
		}
	}
	return jobs, nil
}

// parseJobs reads and parses every def file, on at most workers
// goroutines; each job keeps its own defs and issues.
func parseJobs(jobs []*fileJob, workers int) {
	parallel(len(jobs), workers, func(i int) {
		j := jobs[i]
		data, err := readFileBounded(j.fsys, j.path, maxFileSize)
		if err != nil {
			j.iss = []fileIssue{{Msg: "cannot read: " + err.Error(), Fatal: true}}
			return
		}
		j.defs, j.iss = parseDefXML(data)
	})
}

// collectEntries logs the files' issues and returns every def element in
// load order, with the named ones (possible parents) by name; a name used
// twice in one mod keeps the first. As in the game, a named element whose
// own MayRequire is not met is not registered as a parent (gated holds
// those, for warnings) and does not take its name.
func collectEntries(s *Set, act *activeSet, jobs []*fileJob, log *issueLog) ([]*entry, map[string][]*entry, map[string][]*entry) {
	var entries []*entry
	named := map[string][]*entry{}
	gated := map[string][]*entry{}
	for _, j := range jobs {
		for _, fi := range j.iss {
			log.add(fi.Fatal, j.mod, j.idx, Issue{Mod: s.Mods[j.mod].PackageID, File: j.path, Line: fi.Line, Msg: fi.Msg})
		}
		for k := range j.defs {
			e := &entry{raw: &j.defs[k], job: j, mod: j.mod}
			entries = append(entries, e)
			name := e.raw.Name
			if name == "" {
				continue
			}
			switch g, unk := act.registers(e.raw.Node.Attrs); g {
			case gateSkip:
				gated[name] = append(gated[name], e)
				continue
			case gateUnknown:
				e.regUnknown = unk
			}
			prev := named[name]
			if k := slices.IndexFunc(prev, func(p *entry) bool { return p.mod == e.mod }); k >= 0 {
				log.warn(e, fmt.Sprintf("parent name %q is already used at %s:%d in this mod; that one is kept", name, prev[k].job.path, prev[k].raw.Line))
				continue
			}
			named[name] = append(prev, e)
		}
	}
	return entries, named, gated
}

// loadConcrete resolves inheritance (named entries first, as parents) and
// returns the concrete defs the game loads, with MayRequire applied; the
// ones it skips go to s.Skipped.
func loadConcrete(s *Set, r *resolver, act *activeSet, entries []*entry) []*entry {
	for _, e := range entries {
		if e.raw.Name != "" {
			r.resolve(e)
		}
	}
	var concrete []*entry
	for _, e := range entries {
		if e.raw.Abstract {
			continue
		}
		if e.raw.Name == "" {
			r.resolve(e)
		}
		if e.state != 2 {
			continue
		}
		if e.defName = r.defName(e); e.defName == "" {
			continue
		}
		// As in the game, a def's own MayRequire decides whether it is
		// loaded at all (after inheritance: a skipped def can still be a
		// parent), before duplicates are looked at.
		e.unknown = map[string]bool{}
		for _, id := range e.inherited {
			e.unknown[id] = true
		}
		switch act.check(e.raw.Node.Attrs, false, e.unknown) {
		case gateSkip:
			req, _ := e.raw.Node.Attr(attrMayRequire)
			if v, ok := e.raw.Node.Attr(attrMayRequireAnyOf); ok {
				req = strings.TrimPrefix(req+"; any of "+v, "; ")
			}
			s.Skipped = append(s.Skipped, Skipped{Type: e.raw.Type, Name: e.defName, Mod: s.Mods[e.mod].PackageID, File: e.job.path, Line: e.raw.Line, Requires: req})
			continue
		}
		// e.node stays as resolved: it may be a parent of a def not yet
		// resolved.
		e.loaded = e.node
		if len(e.unknown) == 0 {
			e.loaded = withoutGate(e.node)
		}
		var dropped int
		e.loaded, dropped = act.applyItems(e.loaded, e.unknown)
		s.SkippedItems += dropped
		concrete = append(concrete, e)
	}
	return concrete
}

// keepWinners returns, in load order, the concrete defs that win their
// type and defName. As in the game: within one mod the first definition is
// kept and later ones are skipped; a later mod's definition replaces an
// earlier mod's, except that Core's never replaces another mod's.
func keepWinners(s *Set, concrete []*entry, log *issueLog) []*entry {
	type key struct{ typ, name string }
	winner := map[key]*entry{}
	for _, e := range concrete {
		k := key{e.raw.Type, e.defName}
		if prev, ok := winner[k]; ok {
			if prev.mod == e.mod {
				log.warn(e, fmt.Sprintf("%s %s is defined twice in this mod; the game keeps the first one (%s:%d) and skips this one", k.typ, k.name, prev.job.path, prev.raw.Line))
				continue
			}
			if isCore(s.Mods[e.mod]) && !isCore(s.Mods[prev.mod]) {
				log.warn(e, fmt.Sprintf("%s %s of Core is overridden by the one from mod %s (%s:%d), loaded before it: the game gives Core the lowest priority", k.typ, k.name, s.Mods[prev.mod].PackageID, prev.job.path, prev.raw.Line))
				continue
			}
			log.warn(e, fmt.Sprintf("%s %s from mod %s replaces the one from mod %s (%s:%d)", k.typ, k.name, s.Mods[e.mod].PackageID, s.Mods[prev.mod].PackageID, prev.job.path, prev.raw.Line))
		}
		winner[k] = e
	}
	var final []*entry
	for _, e := range concrete {
		if winner[key{e.raw.Type, e.defName}] == e {
			final = append(final, e)
		}
	}
	return final
}

// buildDefs makes the Defs of the winning entries (hashes not yet
// computed) and lists the unresolved and undecided ones in s, sorted by
// type and name.
func buildDefs(s *Set, final []*entry) []*Def {
	out := make([]*Def, len(final))
	for i, e := range final {
		out[i] = &Def{Type: e.raw.Type, Name: e.defName, Mod: s.Mods[e.mod].PackageID, File: e.job.path, Line: e.raw.Line, Node: e.loaded, UnresolvedParent: e.missing}
		if e.missing != "" {
			s.Unresolved = append(s.Unresolved, out[i])
		}
		if len(e.unknown) > 0 {
			for id := range e.unknown {
				out[i].Undecided = append(out[i].Undecided, id)
			}
			slices.Sort(out[i].Undecided)
			s.Undecided = append(s.Undecided, out[i])
		}
	}
	byTypeName := func(a, b *Def) int {
		if c := strings.Compare(a.Type, b.Type); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	}
	slices.SortFunc(s.Unresolved, byTypeName)
	slices.SortFunc(s.Undecided, byTypeName)
	return out
}

// buildDatabases groups the hashed defs by type into s.Databases, sorted
// by type, each sorted by name and hashed.
func buildDatabases(s *Set, out []*Def) {
	byType := map[string]*Database{}
	for _, d := range out {
		db := byType[d.Type]
		if db == nil {
			db = &Database{Type: d.Type}
			byType[d.Type] = db
			s.Databases = append(s.Databases, db)
		}
		db.Defs = append(db.Defs, d)
	}
	slices.SortFunc(s.Databases, func(a, b *Database) int { return strings.Compare(a.Type, b.Type) })
	for _, db := range s.Databases {
		slices.SortFunc(db.Defs, func(a, b *Def) int { return strings.Compare(a.Name, b.Name) })
		db.rehash()
	}
}

// CorePackageID is the package ID of the game's Core, whose defs the game
// lets every other mod override wherever Core is in the load order.
const CorePackageID = "Ludeon.RimWorld"

func isCore(m Mod) bool { return strings.EqualFold(m.PackageID, CorePackageID) }

func (db *Database) rehash() {
	names := make([]string, len(db.Defs))
	hashes := make([]uint64, len(db.Defs))
	for i, d := range db.Defs {
		names[i], hashes[i] = d.Name, d.Hash
	}
	db.Hash = DatabaseHash(db.Type, names, hashes)
}

// hashDefs computes Def.Hash for every def, in parallel.
func hashDefs(out []*Def, workers int) {
	if workers > len(out) {
		workers = len(out)
	}
	if workers < 1 {
		return
	}
	var wg sync.WaitGroup
	chunk := (len(out) + workers - 1) / workers
	for w := 0; w < workers; w++ {
		lo, hi := w*chunk, min((w+1)*chunk, len(out))
		if lo >= hi {
			break
		}
		wg.Add(1)
		go func(part []*Def) {
			defer wg.Done()
			var buf []byte
			for _, d := range part {
				d.Hash, buf = defHash(buf, d.Type, d.Name, d.Node)
			}
		}(out[lo:hi])
	}
	wg.Wait()
}

// parallel runs fn(0..n-1) on at most workers goroutines.
func parallel(n, workers int, fn func(int)) {
	if workers > n {
		workers = n
	}
	if workers <= 1 {
		for i := 0; i < n; i++ {
			fn(i)
		}
		return
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	next := 0
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				mu.Lock()
				i := next
				next++
				mu.Unlock()
				if i >= n {
					return
				}
				fn(i)
			}
		}()
	}
	wg.Wait()
}

func modLabel(src ModSource, i int) string {
	if src.Dir != "" {
		return src.Dir
	}
	return fmt.Sprintf("#%d", i+1)
}

// issueLog collects issues and orders them by mod, file and line.
type issueLog struct {
	set  *Set
	list []loggedIssue
}

type loggedIssue struct {
	fatal     bool
	mod, file int
	Issue
}

func (l *issueLog) add(fatal bool, mod, file int, is Issue) {
	l.list = append(l.list, loggedIssue{fatal: fatal, mod: mod, file: file, Issue: is})
}

func (l *issueLog) warn(e *entry, msg string) {
	l.add(false, e.mod, e.job.idx, Issue{Mod: l.set.Mods[e.mod].PackageID, File: e.job.path, Line: e.raw.Line, Msg: msg})
}

func (l *issueLog) fail(e *entry, msg string) {
	l.add(true, e.mod, e.job.idx, Issue{Mod: l.set.Mods[e.mod].PackageID, File: e.job.path, Line: e.raw.Line, Msg: msg})
}

// finish sorts the issues (stably) into Set.Errors and Set.Warnings.
func (l *issueLog) finish() {
	slices.SortStableFunc(l.list, func(a, b loggedIssue) int {
		if a.mod != b.mod {
			return a.mod - b.mod
		}
		if a.file != b.file {
			return a.file - b.file
		}
		return a.Line - b.Line
	})
	for _, is := range l.list {
		if is.fatal {
			l.set.Errors = append(l.set.Errors, is.Issue)
		} else {
			l.set.Warnings = append(l.set.Warnings, is.Issue)
		}
	}
}

// resolver applies inheritance.
type resolver struct {
	log   *issueLog
	named map[string][]*entry
	// gated holds, by name, the named entries the game does not register
	// as parents because their MayRequire is not met.
	gated map[string][]*entry
}

// parentFor picks the parent named name for e as the game does: the one
// in e's own mod, else the one from the latest mod loaded before e's mod.
// The game never looks in a mod loaded after the child's; later names the
// first such candidate when no parent was found, for the warning.
func (r *resolver) parentFor(e *entry, name string) (parent, later *entry) {
	for _, c := range r.named[name] {
		switch {
		case c.mod == e.mod:
			return c, nil
		case c.mod < e.mod:
			parent = c
		case later == nil:
			later = c
		}
	}
	if parent != nil {
		return parent, nil
	}
	return nil, later
}

// resolve computes e.node; on failure it records an error and marks e.
func (r *resolver) resolve(e *entry) {
	switch e.state {
	case 2, 3:
		return
	case 1:
		r.log.fail(e, fmt.Sprintf("%s %s: inheritance cycle through parent %q", e.raw.Type, displayName(e.raw), e.raw.Name))
		e.state = 3
		return
	}
	if e.raw.ParentName == "" {
		e.node = e.raw.Node
		e.state = 2
		return
	}
	p, later := r.parentFor(e, e.raw.ParentName)
	if p == nil {
		// The game logs an error and loads the def without the parent's
		// content; it is kept, with the parent's name in its hash. A
		// parent of that name in a later mod, or one whose MayRequire is
		// not met, is not used, whatever it holds: the def is then loaded
		// as written, the same on both sides of a diff, and is not
		// missing anything. (The game would still take a parent of that
		// name from a mod loaded before this one that was not scanned:
		// in practice Core, the same on both sides.) Only a parent in no
		// scanned mod is missing: it is presumably in a mod outside the
		// scan, which may differ between the sides.
		e.node = withAttr(e.raw.Node, Attr{Name: "ParentName", Value: e.raw.ParentName})
		if !r.warnNoParent(e, later) {
			e.missing = e.raw.ParentName
		}
		e.state = 2
		return
	}
	e.state = 1
	r.resolve(p)
	if e.state == 3 { // failed through a cycle back to e
		return
	}
	if p.state != 2 {
		r.log.fail(e, fmt.Sprintf("%s %s: parent %q has errors", e.raw.Type, displayName(e.raw), e.raw.ParentName))
		e.state = 3
		return
	}
	e.node = merge(p.node, e.raw.Node)
	if p.missing != "" {
		// The def element's attributes are the child's own (see merge):
		// keep the name of the missing ancestor in its hash.
		e.node = withAttr(e.node, Attr{Name: "ParentName", Value: p.missing})
	}
	e.missing = p.missing
	e.inherited = unionIDs(p.inherited, p.regUnknown)
	e.state = 2
}

// warnNoParent explains why e finds no parent when one of its name exists
// where the game does not look: with a MayRequire that is not met, in e's
// mod or one loaded before it, or in a mod loaded after e's (later, or a
// gated one there). It reports whether it found such a parent.
func (r *resolver) warnNoParent(e *entry, later *entry) bool {
	what := fmt.Sprintf("%s %s: parent %q", e.raw.Type, displayName(e.raw), e.raw.ParentName)
	for _, g := range r.gated[e.raw.ParentName] {
		if g.mod <= e.mod {
			req, _ := g.raw.Node.Attr(attrMayRequire)
			r.log.warn(e, fmt.Sprintf("%s at %s:%d (mod %s) has MayRequire=%q, not met: the game does not register it as a parent, so this def does not inherit from it", what, g.job.path, g.raw.Line, r.log.set.Mods[g.mod].PackageID, req))
			return true
		}
		if later == nil {
			later = g
		}
	}
	if later != nil {
		r.log.warn(e, fmt.Sprintf("%s is only in mod %s (%s:%d), loaded after this one; the game looks for a parent only in the def's own mod and the mods loaded before it, so it does not inherit from that one", what, r.log.set.Mods[later.mod].PackageID, later.job.path, later.raw.Line))
		return true
	}
	return false
}

// unionIDs returns the sorted union of two sorted ID lists (a itself
// when b adds nothing).
func unionIDs(a, b []string) []string {
	if len(b) == 0 {
		return a
	}
	out := slices.Clone(a)
	for _, id := range b {
		if !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	slices.Sort(out)
	return out
}

// withAttr returns a shallow copy of n with attribute a added.
func withAttr(n *Node, a Attr) *Node {
	out := *n
	out.Attrs = append(slices.Clip(n.Attrs), a)
	sortAttrs(out.Attrs)
	return &out
}

func displayName(d *rawDef) string {
	if d.DefName != "" {
		return d.DefName
	}
	if d.Name != "" {
		return "(Name=" + d.Name + ")"
	}
	return "(unnamed)"
}

// merge returns child c resolved against its resolved parent p, following
// RimWorld's rule (see doc.go). Neither input is modified; unchanged
// subtrees are shared.
func merge(p, c *Node) *Node {
	if c.noInherit {
		return c
	}
	// The game removes the parent element's attributes and copies the
	// child's: they replace the parent's, they are not merged.
	out := &Node{Name: c.Name, Line: c.Line, Attrs: c.Attrs}
	if c.Text != "" {
		out.Text = c.Text
		out.Children = c.Children
		return out
	}
	if len(c.Children) == 0 {
		out.Text = p.Text
		out.Children = p.Children
		return out
	}
	out.Children = make([]*Node, len(p.Children), len(p.Children)+len(c.Children))
	copy(out.Children, p.Children)
	for _, e := range c.Children {
		if e.Name == "li" {
			out.Children = append(out.Children, e)
			continue
		}
		i := slices.IndexFunc(out.Children, func(x *Node) bool { return x.Name == e.Name })
		if i < 0 {
			out.Children = append(out.Children, e)
			continue
		}
		out.Children[i] = merge(out.Children[i], e)
	}
	return out
}
