package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lockhost/lockhost/cmd/internal/cliutil"
	"github.com/lockhost/lockhost/defs"
	"github.com/lockhost/lockhost/game/colony"
	gamecontent "github.com/lockhost/lockhost/game/content"
	"github.com/lockhost/lockhost/host"
	"github.com/lockhost/lockhost/join"
	"github.com/lockhost/lockhost/modsync"
	"github.com/lockhost/lockhost/testing/hosttest"
	"github.com/lockhost/lockhost/wire"
)

// allowTool is a real mod from the shared test content beside the
// repository (the defs tests read it too); the two others are in
// testdata/realmods.
const allowTool = "../../../shared/testdata/real-mods/AllowTool@cc168e8"

// dllMarker is in the code file the tests put in a mod: no byte of it
// may reach a joiner.
const dllMarker = "MZ\x90\x00 not shared: lockhost content sync test assembly"

// realMods copies the base content and the three real mods under dir,
// with a .dll in one of them, and returns their folders: Core first.
func realMods(t *testing.T, dir string) []string {
	t.Helper()
	if _, err := os.Stat(allowTool); err != nil {
		t.Skipf("no shared real mods at %s: %v", allowTool, err)
	}
	core := filepath.Join(dir, "Core")
	if err := os.CopyFS(core, colony.DefaultContentFS()); err != nil {
		t.Fatal(err)
	}
	dirs := []string{core}
	for _, src := range []string{allowTool, "testdata/realmods/MapReroll", "testdata/realmods/DefensivePositions"} {
		dst := filepath.Join(dir, strings.Split(filepath.Base(src), "@")[0])
		if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
			t.Fatal(err)
		}
		dirs = append(dirs, dst)
	}
	for _, p := range []string{"Assemblies/MapReroll.dll", "Defs/Sneaky.dll"} {
		writeFile(t, filepath.Join(dirs[2], p), []byte(dllMarker))
	}
	return dirs
}

func writeFile(t *testing.T, p string, b []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// serveShared hosts a small world of the content in dirs, sharing it
// (--share-content), and returns its address and the manifest shared.
func serveShared(t *testing.T, dirs []string, except ...string) (string, *modsync.Manifest) {
	t.Helper()
	b, err := gamecontent.Load(dirs, "")
	if err != nil {
		t.Fatal(err)
	}
	m, err := modsync.Build(b.Set, modsync.BuildOptions{Except: except})
	if err != nil {
		t.Fatal(err)
	}
	share, err := modsync.NewHandler(m)
	if err != nil {
		t.Fatal(err)
	}
	world, err := colony.New(b.Content, colony.Config{Maps: 2, Width: 64, Height: 64, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	manifest := b.Set.Manifest()
	h := hosttest.Start(t, host.Config{}, host.Content{GameVersion: b.GameVersion, Mods: b.Mods, Databases: b.Summary(), Share: share,
		Detail: func(types []string) []byte {
			d, _ := defs.MarshalDetail(manifest.Only(types))
			return d
		}}, world)
	return h.Addr, m
}

// fetchedLine is the one line a join with --fetch-content prints.
var fetchedLine = regexp.MustCompile(`(?m)^content: (\d+) files, (\d+) bytes fetched \((\d+) from cache\)$`)

// joinFetching joins addr with the base content and --fetch-content into
// cache, and returns the files, bytes fetched and files from the cache
// it printed, and the time from start to WorldReady.
func joinFetching(t *testing.T, addr, core, cache string) (files, fetched, cached int64, took time.Duration, out string) {
	t.Helper()
	start := time.Now()
	code, out, errOut := runJoin(t, addr, "--name", "Alice", "-q", "--exit-after-ready", "--no-input",
		"--content", core, "--fetch-content", "--content-cache", cache)
	took = time.Since(start)
	if code != 0 || !strings.Contains(out, "WorldReady") {
		t.Fatalf("join with --fetch-content: exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
	m := fetchedLine.FindAllStringSubmatch(out, -1)
	if len(m) != 1 {
		t.Fatalf("want one content line, got %d:\n%s", len(m), out)
	}
	n := func(s string) int64 { v, _ := strconv.ParseInt(s, 10, 64); return v }
	return n(m[0][1]), n(m[0][2]), n(m[0][3]), took, out
}

// gzipSize is the size of each file of the mods gzip-compressed alone
// (level 6, gzip's default), in all.
func gzipSize(t *testing.T, m *modsync.Manifest, dirs map[string]string) int64 {
	t.Helper()
	var total int64
	for _, d := range m.Mods {
		for _, f := range d.Files {
			b, err := os.ReadFile(filepath.Join(dirs[d.PackageID], filepath.FromSlash(f.Path)))
			if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			zw := gzip.NewWriter(&buf)
			zw.Write(b)
			zw.Close()
			total += int64(buf.Len())
		}
	}
	return total
}

// TestFetchContentRealMods is content sync's proof: a host runs the base
// content and three real mods and shares them; a joiner with only the
// base content and --fetch-content fetches what it lacks over the
// session connection, at most 1.1 times the gzip size of those files,
// and reaches WorldReady in the same process. The .dll in a mod never
// reaches it; a second join from the same cache, and a join of another
// host that shares two of the mods, fetch nothing.
func TestFetchContentRealMods(t *testing.T) {
	hostDirs := realMods(t, filepath.Join(t.TempDir(), "host"))
	addr, m := serveShared(t, hostDirs)
	joinCore := filepath.Join(t.TempDir(), "mine", "Core")
	if err := os.CopyFS(joinCore, colony.DefaultContentFS()); err != nil {
		t.Fatal(err)
	}
	cache := filepath.Join(t.TempDir(), "cache")
	mine := treeDigest(t, filepath.Dir(joinCore))
	defer func() {
		if treeDigest(t, filepath.Dir(joinCore)) != mine {
			t.Error("the player's own mod folders changed")
		}
	}()

	// Without --fetch-content: refused, each missing mod named.
	code, out, errOut := runJoin(t, addr, "--name", "Alice", "-q", "--exit-after-ready", "--no-input", "--content", joinCore)
	if code != cliutil.ExitRejected {
		t.Fatalf("join without --fetch-content: exit %d, want %d\n%s\n%s", code, cliutil.ExitRejected, out, errOut)
	}
	for _, id := range []string{"UnlimitedHugs.AllowTool", "UnlimitedHugs.MapReroll", "UnlimitedHugs.DefensivePositions"} {
		if !regexp.MustCompile(`missing mod: ` + regexp.QuoteMeta(id) + ` .*--fetch-content`).MatchString(errOut) {
			t.Errorf("the refusal does not name %s with --fetch-content:\n%s", id, errOut)
		}
	}

	files, fetched, cached, withFetch, out := joinFetching(t, addr, joinCore, cache)
	missing := &modsync.Manifest{Mods: m.Mods[1:]} // the three mods: the joiner has Core
	want := gzipSize(t, missing, map[string]string{m.Mods[1].PackageID: hostDirs[1], m.Mods[2].PackageID: hostDirs[2], m.Mods[3].PackageID: hostDirs[3]})
	var raw int64
	for _, f := range modsync.Need(missing, nil) {
		raw += f.Size
	}
	t.Logf("fetched %d files: %d bytes on the wire; the files are %d bytes, %d gzip-compressed one by one (ratio %.3f); connect to WorldReady %v",
		files, fetched, raw, want, float64(fetched)/float64(want), withFetch)
	if files != int64(len(modsync.Need(missing, nil))) || cached != 0 {
		t.Errorf("fetched %d files (%d from cache), want the %d files of the three mods", files, cached, len(modsync.Need(missing, nil)))
	}
	if fetched == 0 || float64(fetched) > 1.1*float64(want) {
		t.Errorf("fetched %d bytes, more than 1.1 times the %d bytes of gzip", fetched, want)
	}
	for _, id := range []string{"UnlimitedHugs.AllowTool", "UnlimitedHugs.MapReroll", "UnlimitedHugs.DefensivePositions"} {
		if !strings.Contains(out, "content: "+id) {
			t.Errorf("no line for %s:\n%s", id, out)
		}
	}
	if strings.Contains(out, "content: lockhost.core") {
		t.Errorf("a line for the base content the joiner has:\n%s", out)
	}
	noDLL(t, cache)

	// The same fetch counted in whole frames (headers, hashes and the
	// manifest's chunks included), into another cache.
	mineB, err := gamecontent.Load([]string{joinCore}, "")
	if err != nil {
		t.Fatal(err)
	}
	other, err := modsync.OpenCache(filepath.Join(t.TempDir(), "other"))
	if err != nil {
		t.Fatal(err)
	}
	var frames, manifestFrames int64
	_, err = join.FetchContent(context.Background(), join.Config{Addr: addr, Databases: mineB.Summary()}, func(ctx context.Context, cc *join.ContentConn) error {
		m, _, err := cc.Manifest(ctx, modsync.DefaultLimits)
		if err != nil {
			return err
		}
		manifestFrames = cc.Received
		_, err = (&modsync.Fetcher{Source: cc, Cache: other, Limits: modsync.DefaultLimits}).Fetch(ctx, modsync.Need(&modsync.Manifest{Mods: m.Mods[1:]}, nil))
		frames = cc.Received - manifestFrames
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("in whole frames: %d bytes for the files (%.3f of gzip), %d for the host's Server_ModList and the manifest", frames, float64(frames)/float64(want), manifestFrames)
	if float64(frames) > 1.1*float64(want) {
		t.Errorf("%d bytes of frames for the files, more than 1.1 times the %d bytes of gzip", frames, want)
	}

	// Again from the same cache: nothing fetched.
	_, fetched, cached, _, _ = joinFetching(t, addr, joinCore, cache)
	if fetched != 0 || cached != files {
		t.Errorf("second join: %d bytes fetched, %d files from cache, want 0 and %d", fetched, cached, files)
	}

	// Another host with two of the three mods: nothing fetched either.
	otherDirs := realMods(t, filepath.Join(t.TempDir(), "other"))
	addr2, _ := serveShared(t, otherDirs[:3])
	_, fetched, _, _, _ = joinFetching(t, addr2, joinCore, cache)
	if fetched != 0 {
		t.Errorf("a host sharing two of the mods: %d bytes fetched, want 0", fetched)
	}
}

// treeDigest is every path, size, mode and modification time under dir.
func treeDigest(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		b.WriteString(p + " " + strconv.FormatInt(info.Size(), 10) + " " + info.Mode().String() + " " + info.ModTime().String() + "\n")
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// noDLL checks that no file under dir holds the test's code file.
func noDLL(t *testing.T, dir string) {
	t.Helper()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if strings.EqualFold(filepath.Ext(p), ".dll") {
			t.Errorf("a .dll reached the joiner: %s", p)
		}
		b, err := os.ReadFile(p)
		if err == nil && bytes.Contains(b, []byte(dllMarker)) {
			t.Errorf("the .dll's bytes reached the joiner: %s", p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// cutSource gives a file's bytes up to cut, then fails: a connection
// lost half way.
type cutSource struct {
	modsync.Source
	cut int64
}

func (c cutSource) Get(ctx context.Context, f modsync.File, from int64) (io.ReadCloser, int64, error) {
	body, start, err := c.Source.Get(ctx, f, from)
	if err != nil {
		return nil, 0, err
	}
	return struct {
		io.Reader
		io.Closer
	}{io.MultiReader(io.LimitReader(body, c.cut-from), errReader{}), body}, start, nil
}

type errReader struct{}

func (errReader) Read([]byte) (int, error) { return 0, errors.New("connection cut") }

// TestFetchResumesOverSession cuts a file's fetch over the session
// connection at half, and fetches again on a new connection: the host
// sends at most the rest and one chunk, and the file enters the cache
// whole.
func TestFetchResumesOverSession(t *testing.T) {
	dir := t.TempDir()
	core := filepath.Join(dir, "Core")
	if err := os.CopyFS(core, colony.DefaultContentFS()); err != nil {
		t.Fatal(err)
	}
	mod := filepath.Join(dir, "Big")
	writeFile(t, filepath.Join(mod, "About", "About.xml"), []byte(`<ModMetaData><packageId>test.big</packageId><name>Big</name></ModMetaData>`))
	writeFile(t, filepath.Join(mod, "Defs", "Big.xml"), []byte(`<Defs><ThingDef><defName>BigThing</defName><category>Item</category></ThingDef></Defs>`))
	big := make([]byte, 3<<20)
	x := uint32(7)
	for i := range big {
		x = x*1664525 + 1013904223
		big[i] = byte(x >> 24)
	}
	writeFile(t, filepath.Join(mod, "Textures", "Big.png"), big)
	addr, m := serveShared(t, []string{core, mod})
	var file modsync.File
	for _, f := range m.Mods[1].Files {
		if f.Size == int64(len(big)) {
			file = f
		}
	}
	cache, err := modsync.OpenCache(filepath.Join(dir, "cache"))
	if err != nil {
		t.Fatal(err)
	}
	local, err := gamecontent.Load([]string{core}, "")
	if err != nil {
		t.Fatal(err)
	}
	fetch := func(cut int64) (modsync.Stats, error) {
		var st modsync.Stats
		_, err := join.FetchContent(context.Background(), join.Config{Addr: addr, Databases: local.Summary()}, func(ctx context.Context, cc *join.ContentConn) error {
			var src modsync.Source = cc
			if cut > 0 {
				src = cutSource{cc, cut}
			}
			var err error
			st, err = (&modsync.Fetcher{Source: src, Cache: cache, Limits: modsync.DefaultLimits}).Fetch(ctx, []modsync.File{file})
			return err
		})
		return st, err
	}
	half := file.Size / 2
	if _, err := fetch(half); err == nil {
		t.Fatal("a fetch cut at half succeeded")
	}
	st, err := fetch(0)
	if err != nil {
		t.Fatal(err)
	}
	rest := file.Size - half
	t.Logf("resumed from %d: %d bytes fetched for the rest %d (chunk %d)", st.Resumed, st.FetchedBytes, rest, wire.MaxChunkData)
	if st.Resumed != half || st.FetchedBytes > rest+wire.MaxChunkData || st.FetchedBytes < rest {
		t.Errorf("resumed %d, fetched %d bytes: want %d resumed and at most %d+%d fetched", st.Resumed, st.FetchedBytes, half, rest, wire.MaxChunkData)
	}
	if !cache.Has(file.Hash, file.Size) {
		t.Error("the file is not in the cache")
	}
}

// TestBinaryFetchContent runs the real tools: a host with TLS and an
// HTTP listener shares the three real mods but one (held back); the
// joiner has the base content and its own copy of that one, and fetches
// the two others through TLS on the game port, then joins. The HTTP
// listener serves the same manifest under /content/.
func TestBinaryFetchContent(t *testing.T) {
	joinBin, hostBin := buildTools(t)
	hostDirs := realMods(t, filepath.Join(t.TempDir(), "host"))
	args := []string{"--tls", "--http", "127.0.0.1:0", "--share-content", "--share-content-except", "UnlimitedHugs.DefensivePositions"}
	for _, d := range hostDirs {
		args = append(args, "--content", d)
	}
	log, addr := startHostBin(t, hostBin, args...)
	mine := filepath.Join(t.TempDir(), "mine")
	if err := os.CopyFS(filepath.Join(mine, "Core"), colony.DefaultContentFS()); err != nil {
		t.Fatal(err)
	}
	if err := os.CopyFS(filepath.Join(mine, "DefensivePositions"), os.DirFS(hostDirs[3])); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runBin(t, joinBin, addr, "--name", "Alice", "-q", "--exit-after-ready", "--no-input", "--tls",
		"--known-hosts", filepath.Join(t.TempDir(), "known_hosts"), "--content", filepath.Join(mine, "Core"),
		"--content", filepath.Join(mine, "DefensivePositions"), "--fetch-content", "--content-cache", filepath.Join(t.TempDir(), "cache"))
	if code != 0 || !strings.Contains(out, "WorldReady") {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
	for _, want := range []string{"content: UnlimitedHugs.AllowTool", "content: UnlimitedHugs.MapReroll", "UnlimitedHugs.DefensivePositions", "does not share it"} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %q:\n%s", want, out)
		}
	}
	if m := fetchedLine.FindStringSubmatch(out); m == nil || m[2] == "0" {
		t.Errorf("no bytes fetched:\n%s", out)
	}
	web := regexp.MustCompile(`players may join from a browser.*url=http://(\S+)/play`).FindStringSubmatch(log.String())
	if web == nil {
		t.Fatalf("no HTTP address in the host's log:\n%s", log.String())
	}
	m, sum, err := modsync.HTTPSource{Base: "http://" + web[1]}.Manifest(context.Background(), modsync.DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Mods) != 4 || !m.Mods[3].Held || len(m.Mods[3].Files) != 0 {
		t.Errorf("the manifest over HTTP (%s): %d mods, the last held %v", sum, len(m.Mods), m.Mods[len(m.Mods)-1].Held)
	}
}
