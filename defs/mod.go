package defs

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Mod identifies one mod of a content set.
type Mod struct {
	PackageID string // from About.xml <packageId>, as written
	Name      string // from About.xml <name>
	Version   string // from About.xml <modVersion>, may be empty
	Dir       string // display path of the mod folder, may be empty
	// Folders are the load folders the scan used, in increasing priority
	// ("." is the mod root).
	Folders []string
	// DerivedID is set when About.xml has no <packageId> and PackageID
	// was derived from the mod's folder name.
	DerivedID bool
}

// readAbout reads About/About.xml of a mod. The package ID is empty when
// the file has none (mods from before packageId existed).
func readAbout(fsys fs.FS) (Mod, []string, error) {
	data, err := readFileBounded(fsys, "About/About.xml", maxFileSize)
	if err != nil {
		return Mod{}, nil, fmt.Errorf("reading About/About.xml: %w", err)
	}
	root, err := parseXML(data)
	if err != nil {
		return Mod{}, nil, fmt.Errorf("About/About.xml: %w", err)
	}
	var m Mod
	m.PackageID, _ = root.Value("packageId")
	m.Name, _ = root.Value("name")
	m.Version, _ = root.Value("modVersion")
	var supported []string
	if sv := root.Child("supportedVersions"); sv != nil {
		for _, li := range sv.Children {
			if li.Name == "li" && li.Text != "" {
				supported = append(supported, li.Text)
			}
		}
	}
	return m, supported, nil
}

// parseVersion parses "1.5" or "v1.5" into its numeric parts.
func parseVersion(s string) ([]int, bool) {
	s = strings.TrimSpace(s)
	s = strings.TrimPrefix(strings.TrimPrefix(s, "v"), "V")
	if s == "" {
		return nil, false
	}
	parts := strings.Split(s, ".")
	out := make([]int, len(parts))
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 || strings.HasPrefix(p, "+") {
			return nil, false
		}
		out[i] = n
	}
	return out, true
}

func cmpVersion(a, b []int) int {
	for i := 0; i < len(a) || i < len(b); i++ {
		var x, y int
		if i < len(a) {
			x = a[i]
		}
		if i < len(b) {
			y = b[i]
		}
		if x != y {
			if x < y {
				return -1
			}
			return 1
		}
	}
	return 0
}

// folderIssue is a problem with a mod's folder layout (LoadFolders.xml).
type folderIssue struct {
	File  string
	Line  int
	Msg   string
	Fatal bool
}

// selectFolders returns the mod's load folders in increasing priority
// ("." is the mod root), following the rule in doc.go.
func selectFolders(fsys fs.FS, gameVersion string, active func(string) bool) ([]string, []folderIssue) {
	want, wantOK := parseVersion(gameVersion)
	var issues []folderIssue
	if data, err := readFileBounded(fsys, loadFoldersName(fsys), maxFileSize); err == nil {
		folders, ok, iss := loadFoldersXML(data, gameVersion, want, wantOK, active)
		issues = append(issues, iss...)
		if ok {
			return folders, issues
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		issues = append(issues, folderIssue{File: "LoadFolders.xml", Msg: "cannot read: " + err.Error(), Fatal: true})
	}
	return defaultFolders(fsys, want), issues
}

// defaultFolders is the game's rule for a mod without a usable
// LoadFolders.xml: the mod root, Common/, and the version folder: the one
// named exactly as the game version's major.minor (such as 1.6), else the
// folder whose name parses as the highest major.minor not above it, else
// (every version folder is newer) the lowest one. A folder name parses as
// a version when its first two dot-separated parts are integers ("1.5",
// "1.5.1"; not "v1.5"); the folder read is then the canonical "major.minor".
func defaultFolders(fsys fs.FS, want []int) []string {
	folders := []string{"."}
	if isDir(fsys, "Common") {
		folders = append(folders, "Common")
	}
	if len(want) < 2 {
		return folders
	}
	exact := fmt.Sprintf("%d.%d", want[0], want[1])
	if isDir(fsys, exact) {
		return append(folders, exact)
	}
	entries, _ := fs.ReadDir(fsys, ".")
	var below, above []int
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		v, ok := folderVersion(e.Name())
		if !ok {
			continue
		}
		if cmpVersion(v, want[:2]) <= 0 {
			if below == nil || cmpVersion(v, below) > 0 {
				below = v
			}
		} else if above == nil || cmpVersion(v, above) < 0 {
			above = v
		}
	}
	pick := below
	if pick == nil {
		pick = above
	}
	if pick != nil {
		if name := fmt.Sprintf("%d.%d", pick[0], pick[1]); isDir(fsys, name) {
			folders = append(folders, name)
		}
	}
	return folders
}

// folderVersion parses a folder name the way the game does: at least two
// dot-separated parts, the first two non-negative integers.
func folderVersion(name string) ([]int, bool) {
	parts := strings.Split(name, ".")
	if len(parts) < 2 {
		return nil, false
	}
	out := make([]int, 2)
	for i := range out {
		n, err := strconv.Atoi(parts[i])
		if err != nil || n < 0 || strings.HasPrefix(parts[i], "+") {
			return nil, false
		}
		out[i] = n
	}
	return out, true
}

// loadFoldersName returns the name of the mod's LoadFolders.xml. Mods
// made on Windows, where the game finds it whatever its letter case, also
// spell it loadFolders.xml; the exact name wins when both exist.
func loadFoldersName(fsys fs.FS) string {
	const name = "LoadFolders.xml"
	if _, err := fs.Stat(fsys, name); err == nil {
		return name
	}
	entries, _ := fs.ReadDir(fsys, ".")
	for _, e := range entries {
		if !e.IsDir() && strings.EqualFold(e.Name(), name) {
			return e.Name()
		}
	}
	return name
}

func isDir(fsys fs.FS, name string) bool {
	st, err := fs.Stat(fsys, name)
	return err == nil && st.IsDir()
}

// loadFoldersXML applies LoadFolders.xml. ok is false when the file has no
// entry usable for the game version.
func loadFoldersXML(data []byte, gameVersion string, want []int, wantOK bool, active func(string) bool) ([]string, bool, []folderIssue) {
	root, err := parseXML(data)
	if err != nil {
		line := 1
		var se *syntaxError
		if errors.As(err, &se) {
			line = se.Line
		}
		return nil, false, []folderIssue{{File: "LoadFolders.xml", Line: line, Msg: "XML syntax error: " + errMsg(err), Fatal: true}}
	}
	// As the game: the entry for the version, if it lists any folder;
	// else the highest listed version not above it (which may be that
	// same, empty entry); else <default>.
	var pick, exact, fallback *Node
	var best []int
	for _, c := range root.Children {
		name := strings.TrimPrefix(strings.TrimPrefix(c.Name, "v"), "V")
		switch {
		case c.Name == "default":
			if fallback == nil {
				fallback = c
			}
			continue
		case (name == gameVersion || len(want) >= 2 && name == fmt.Sprintf("%d.%d", want[0], want[1])) && exact == nil:
			exact = c
		}
		if !wantOK || !strings.ContainsRune(name, '.') {
			continue
		}
		v, ok := parseVersion(name)
		if !ok || cmpVersion(v, want) > 0 {
			continue
		}
		if best == nil || cmpVersion(v, best) > 0 {
			best, pick = v, c
		}
	}
	if exact != nil && slices.ContainsFunc(exact.Children, func(n *Node) bool { return n.Name == "li" }) {
		pick = exact
	}
	if pick == nil {
		pick = fallback
	}
	if pick == nil {
		return nil, false, nil
	}
	var issues []folderIssue
	var folders []string
	for _, li := range pick.Children {
		if li.Name != "li" {
			continue
		}
		if !entryActive(li, active) {
			continue
		}
		dir := strings.ReplaceAll(strings.TrimSpace(li.Text), `\`, "/")
		dotdot := slices.Contains(strings.Split(dir, "/"), "..")
		dir = path.Clean("/" + dir)[1:]
		if dir == "" {
			dir = "."
		}
		if dotdot {
			issues = append(issues, folderIssue{File: "LoadFolders.xml", Line: li.Line, Msg: fmt.Sprintf("folder %q goes up with \"..\"; a mod cannot load folders outside itself, so %q inside the mod is read instead", li.Text, dir)})
		}
		if !fs.ValidPath(dir) {
			issues = append(issues, folderIssue{File: "LoadFolders.xml", Line: li.Line, Msg: fmt.Sprintf("invalid folder %q", li.Text)})
			continue
		}
		if !slices.Contains(folders, dir) {
			folders = append(folders, dir)
		}
	}
	// An entry that loads no folder (empty, or every <li> inactive) loads
	// nothing from the mod, as in the game.
	return folders, true, issues
}

// entryActive applies the conditions the game reads on a LoadFolders.xml
// entry, all of which must hold: IfModActive (one of the listed mods is
// active), IfModActiveAll (every listed mod is) and IfModNotActive (none
// is). The game reads no other attribute (there is no IfModNotActiveAll).
func entryActive(li *Node, active func(string) bool) bool {
	if cond, ok := li.Attr("IfModActive"); ok && !anyActive(cond, active) {
		return false
	}
	if cond, ok := li.Attr("IfModActiveAll"); ok && !allActive(cond, active) {
		return false
	}
	if cond, ok := li.Attr("IfModNotActive"); ok && anyActive(cond, active) {
		return false
	}
	return true
}

// allActive reports whether every comma-separated package ID of list is
// active; as in the game, an empty entry names no active mod.
func allActive(list string, active func(string) bool) bool {
	for _, id := range strings.Split(list, ",") {
		if id = strings.TrimSpace(id); id == "" || !active(id) {
			return false
		}
	}
	return true
}

func anyActive(list string, active func(string) bool) bool {
	for _, id := range strings.Split(list, ",") {
		if id = strings.TrimSpace(id); id != "" && active(id) {
			return true
		}
	}
	return false
}

func errMsg(err error) string {
	var se *syntaxError
	if errors.As(err, &se) {
		return se.Msg
	}
	return err.Error()
}

// defFile is one def file selected for loading.
type defFile struct {
	Path   string // slash path within the mod
	folder int    // index of its load folder
}

// listDefFiles lists the *.xml files under <folder>/Defs for every load
// folder; a file whose path relative to its load folder equals that of a
// file of a later folder is hidden by it. As in the game, which keys the
// files by that path with a case-sensitive comparer, paths that differ
// only in letter case are different files, and both are read.
func listDefFiles(fsys fs.FS, folders []string) ([]defFile, error) {
	winner := map[string]defFile{}
	for fi, folder := range folders {
		base := path.Join(folder, "Defs")
		if !isDir(fsys, base) {
			continue
		}
		err := fs.WalkDir(fsys, base, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() || !strings.EqualFold(path.Ext(p), ".xml") {
				return nil
			}
			rel := p
			if folder != "." {
				rel = strings.TrimPrefix(p, folder+"/")
			}
			winner[rel] = defFile{Path: p, folder: fi}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("listing %s: %w", base, err)
		}
	}
	out := make([]defFile, 0, len(winner))
	for _, f := range winner {
		out = append(out, f)
	}
	// The game reads a mod's files from its highest-priority folder (the
	// version folder, or the last LoadFolders.xml entry) down to the root,
	// so within a mod the first of two defs of one name comes from there.
	slices.SortFunc(out, func(a, b defFile) int {
		if a.folder != b.folder {
			return b.folder - a.folder
		}
		return gameFileOrder(a.Path, b.Path)
	})
	return out, nil
}

// gameFileOrder orders two files of one load folder as the game lists them
// (DirectoryInfo.GetFiles with SearchOption.AllDirectories on Windows): a
// folder's own files before the files of its subfolders, subfolders one
// after the other (depth first), and names within a folder in NTFS order:
// compared in upper case, so letter case does not matter ("a.xml" before
// "B.xml"). Names equal but for letter case fall back to byte order.
func gameFileOrder(a, b string) int {
	as, bs := strings.Split(a, "/"), strings.Split(b, "/")
	for i := 0; i < len(as) && i < len(bs); i++ {
		if as[i] == bs[i] {
			continue
		}
		aFile, bFile := i == len(as)-1, i == len(bs)-1
		if aFile != bFile {
			if aFile {
				return -1
			}
			return 1
		}
		if c := strings.Compare(strings.ToUpper(as[i]), strings.ToUpper(bs[i])); c != 0 {
			return c
		}
		return strings.Compare(as[i], bs[i])
	}
	return len(as) - len(bs)
}

// readModsConfig returns the <activeMods> element of a ModsConfig.xml.
func readModsConfig(modsConfig string) (*Node, error) {
	data, err := readFileBounded(os.DirFS(filepath.Dir(modsConfig)), filepath.Base(modsConfig), maxFileSize)
	if err != nil {
		return nil, fmt.Errorf("reading mods config: %w", err)
	}
	root, err := parseXML(data)
	if err != nil {
		return nil, fmt.Errorf("mods config %s: %w", modsConfig, err)
	}
	active := root.Child("activeMods")
	if active == nil {
		return nil, fmt.Errorf("mods config %s: no <activeMods>", modsConfig)
	}
	return active, nil
}

// ActiveMods returns the package IDs a RimWorld ModsConfig.xml lists as
// active (<activeMods><li>…), in its order: with LoadOrder's folders, the
// Options.Active of a scan that knows every active mod.
func ActiveMods(modsConfig string) ([]string, error) {
	active, err := readModsConfig(modsConfig)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, li := range active.Children {
		if li.Name == "li" && li.Text != "" {
			out = append(out, li.Text)
		}
	}
	return out, nil
}

// LoadOrder reads a RimWorld ModsConfig.xml and returns the folders of its
// active mods in load order. Each search directory is a folder whose
// immediate subfolders are mods (a subfolder with About/About.xml); a
// search directory that is itself a mod folder also counts. Package IDs
// match case-insensitively, and an ID ending in "_steam" also matches the
// ID without that suffix. When an ID is found in several places, the first
// search directory (then the lexically first subfolder) wins. If some
// active mods are not found, LoadOrder returns the folders it did find
// together with an error naming the missing IDs.
func LoadOrder(modsConfig string, searchDirs []string) ([]string, error) {
	active, err := readModsConfig(modsConfig)
	if err != nil {
		return nil, err
	}
	found := map[string]string{} // lower-case package ID -> folder
	add := func(dir string) {
		m, _, err := readAbout(os.DirFS(dir))
		if err != nil {
			return
		}
		id := strings.ToLower(m.PackageID)
		if _, dup := found[id]; !dup {
			found[id] = dir
		}
	}
	for _, sd := range searchDirs {
		if _, err := os.Stat(filepath.Join(sd, "About", "About.xml")); err == nil {
			add(sd)
			continue
		}
		entries, err := os.ReadDir(sd)
		if err != nil {
			return nil, fmt.Errorf("mod search folder: %w", err)
		}
		for _, e := range entries {
			if e.IsDir() {
				add(filepath.Join(sd, e.Name()))
			}
		}
	}
	var out, missing []string
	seen := map[string]bool{}
	for _, li := range active.Children {
		if li.Name != "li" || li.Text == "" {
			continue
		}
		id := strings.ToLower(li.Text)
		dir, ok := found[id]
		if !ok {
			dir, ok = found[strings.TrimSuffix(id, "_steam")]
		}
		if !ok {
			missing = append(missing, li.Text)
			continue
		}
		if !seen[dir] {
			seen[dir] = true
			out = append(out, dir)
		}
	}
	if len(missing) > 0 {
		return out, fmt.Errorf("mods config %s: %d active mod(s) not found in the search folders: %s", modsConfig, len(missing), strings.Join(missing, ", "))
	}
	return out, nil
}
