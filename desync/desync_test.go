package desync

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/lockhost/lockhost/lockstep"
)

// sample is a map-scope report with parts and a command window.
func sample(t0 time.Time, tick uint64, player int32) *Report {
	return &Report{
		Version:   Version,
		Time:      t0,
		Game:      "test colony",
		PlayerID:  player,
		Player:    "Alice",
		Tick:      tick,
		HostTick:  tick + 6,
		Scope:     ScopeMap,
		MapIDs:    []int32{2},
		WorldHost: 0xdeadbeefcafef00d, WorldClient: 0x0123456789abcdef,
		Maps: []MapCheck{
			{ID: 1, Host: 11, Client: 11, Match: true},
			{ID: 2, Host: 22, Client: 23, Parts: []PartCheck{
				{Name: "terrain", Host: 1, Client: 1, Match: true},
				{Name: "things", Host: 2, Client: 3},
				{Name: "things rows q2", Host: 4, Client: 5},
			}},
		},
		Commands: Records([]lockstep.Command{
			{Tick: tick - 2, Seq: 0, MapID: 2, Kind: 3, Player: player, Payload: []byte{1, 2, 3}},
			{Tick: tick - 1, Seq: 1, MapID: 1, Kind: lockstep.KindSetSpeed, Player: 0, Payload: []byte{2}},
		}),
		CommandsFrom: tick - 10,
		Repair:       RepairMap,
		Count:        2,
	}
}

func TestWriteReadRoundTrip(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data", DirName) // created by Write
	in := sample(time.Date(2025, 3, 1, 10, 20, 30, 123456789, time.FixedZone("X", 3600)), 1200, 2)
	path, err := Write(dir, in)
	if err != nil {
		t.Fatal(err)
	}
	if want := "desync-20250301T092030.123456789Z-t1200-p2.json"; filepath.Base(path) != want {
		t.Fatalf("name %s, want %s", filepath.Base(path), want)
	}
	if st, err := os.Stat(dir); err != nil || st.Mode().Perm() != 0o755 {
		t.Fatalf("folder: %v %v", st, err)
	}
	b, _ := os.ReadFile(path)
	for _, want := range []string{`"player_id": 2`, `"map_ids": [`, `"world_client":`, `"commands_from":`, `"map_id": 2`, `"payload": "AQID"`, "\n  "} {
		if !strings.Contains(string(b), want) {
			t.Errorf("JSON lacks %q:\n%s", want, b)
		}
	}
	out, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if !out.Time.Equal(in.Time) {
		t.Fatalf("time %v, want %v", out.Time, in.Time)
	}
	out.Time = in.Time
	if !reflect.DeepEqual(out, in) {
		t.Fatalf("round trip:\n got %+v\nwant %+v", out, in)
	}
}

func TestWriteDefaults(t *testing.T) {
	dir := t.TempDir()
	in := sample(time.Time{}, 50, -3)
	in.Version = 0
	before := time.Now()
	path, err := Write(dir, in)
	if err != nil {
		t.Fatal(err)
	}
	if in.Version != 0 || !in.Time.IsZero() {
		t.Fatal("Write modified its report")
	}
	if !isReportName(filepath.Base(path)) || !strings.HasSuffix(path, "-t50-p-3.json") {
		t.Fatalf("name %s", path)
	}
	out, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if out.Version != Version || out.Time.Before(before.Add(-time.Second)) || out.Time.After(time.Now()) {
		t.Fatalf("version %d time %v", out.Version, out.Time)
	}

	in.Version = 2
	if _, err := Write(dir, in); !errors.Is(err, ErrVersion) {
		t.Fatalf("version 2 written: %v", err)
	}
	if _, err := Write(dir, nil); err == nil {
		t.Fatal("nil report written")
	}
}

func TestWriteSameName(t *testing.T) {
	dir := t.TempDir()
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	p1, err := Write(dir, sample(t0, 10, 1))
	if err != nil {
		t.Fatal(err)
	}
	p2, err := Write(dir, sample(t0, 10, 1))
	if err != nil {
		t.Fatal(err)
	}
	if p1 == p2 || p2 <= p1 {
		t.Fatalf("second report %s does not sort after the first %s", p2, p1)
	}
	if es, _ := List(dir); len(es) != 2 {
		t.Fatalf("%d reports, want 2", len(es))
	}
}

func TestNamesSortByTime(t *testing.T) {
	base := time.Date(2025, 6, 30, 23, 59, 59, 999999999, time.UTC)
	times := []time.Time{
		base,
		base.Add(time.Nanosecond),  // next day, next month
		base.Add(-time.Nanosecond), // same second
		base.Add(-9 * time.Second), // 50 s vs 59 s
		base.AddDate(-1, 0, 0),     // earlier year
		base.AddDate(0, 0, 1).In(time.FixedZone("E", -10*3600)), // zone must not matter
		base.Add(time.Hour).In(time.FixedZone("W", 14*3600)),
		time.Date(2025, 6, 30, 9, 0, 0, 0, time.UTC), // 09 vs 23
	}
	ticks := []uint64{5, 1000000, 3, 99, 7, 2, 10, 123456}
	var names []string
	for i, tm := range times {
		names = append(names, fileName(tm, ticks[i], int32(i)))
	}
	byName := slices.Clone(names)
	sort.Strings(byName)
	idx := make([]int, len(times))
	for i := range idx {
		idx[i] = i
	}
	sort.Slice(idx, func(a, b int) bool { return times[idx[a]].Before(times[idx[b]]) })
	for i, j := range idx {
		if byName[i] != names[j] {
			t.Fatalf("name order %v differs from time order at %d: %s", byName, i, names[j])
		}
	}

	// List returns them oldest first too.
	dir := t.TempDir()
	for i, tm := range times {
		if _, err := Write(dir, sample(tm, ticks[i]+10, int32(i))); err != nil {
			t.Fatal(err)
		}
	}
	es, err := List(dir)
	if err != nil || len(es) != len(times) {
		t.Fatalf("list: %d %v", len(es), err)
	}
	for i := 1; i < len(es); i++ {
		if es[i].Err != nil || !es[i-1].Report.Time.Before(es[i].Report.Time) {
			t.Fatalf("entry %d out of order: %v then %v (%v)", i, es[i-1].Report.Time, es[i].Report.Time, es[i].Err)
		}
	}
}

func TestPruneKeepsNewest(t *testing.T) {
	dir := t.TempDir()
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	var all []string
	for i := range Keep + 10 {
		name := fileName(t0.Add(time.Duration(i)*time.Second), uint64(i), 1)
		all = append(all, name)
		if err := os.WriteFile(filepath.Join(dir, name), []byte("{}"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	others := []string{"notes.txt", "desync-latest.json", "desync-20240101T000000.000000000Z-t1-p1.json.bak",
		".desync-20240101T000000.000000000Z-t1-p1.json.tmp-123", "a.json"}
	for _, n := range others {
		if err := os.WriteFile(filepath.Join(dir, n), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// A folder named like an old report is not a report.
	oldDir := fileName(t0.Add(-time.Hour), 1, 1)
	if err := os.Mkdir(filepath.Join(dir, oldDir), 0o755); err != nil {
		t.Fatal(err)
	}

	newest, err := Write(dir, sample(t0.Add(time.Hour), 1, 1))
	if err != nil {
		t.Fatal(err)
	}
	all = append(all, filepath.Base(newest))
	names, err := reportNames(dir)
	if err != nil {
		t.Fatal(err)
	}
	if want := all[len(all)-Keep:]; !slices.Equal(names, want) {
		t.Fatalf("kept %d reports from %s, want %d from %s", len(names), names[0], len(want), want[0])
	}
	for _, n := range append(others, oldDir) {
		if _, err := os.Stat(filepath.Join(dir, n)); err != nil {
			t.Errorf("%s was touched: %v", n, err)
		}
	}

	// A report older than every other (a clock set back) survives its
	// own Write; the oldest other report goes instead.
	old, err := Write(dir, sample(t0.Add(-24*time.Hour), 1, 1))
	if err != nil {
		t.Fatal(err)
	}
	names, _ = reportNames(dir)
	if len(names) != Keep || names[0] != filepath.Base(old) || slices.Contains(names, all[len(all)-Keep]) {
		t.Fatalf("after an old report: %d reports, first %s", len(names), names[0])
	}
}

func TestReadRefuses(t *testing.T) {
	dir := t.TempDir()
	good, err := Write(dir, sample(time.Now(), 100, 1))
	if err != nil {
		t.Fatal(err)
	}
	goodBytes, _ := os.ReadFile(good)
	file := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	big := filepath.Join(dir, "big.json")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte(`{"version":1}`))
	if err := f.Truncate(MaxReportSize + 1); err != nil { // sparse: cheap
		t.Fatal(err)
	}
	f.Close()
	for _, tc := range []struct {
		name, path string
		is         error
		says       string
	}{
		{"oversize", big, ErrTooLarge, "too large"},
		{"version 2", file("v2.json", []byte(`{"version":2,"new_field":true}`)), ErrVersion, "version 2"},
		{"version 0", file("v0.json", []byte(`{"version":0,"tick":5}`)), ErrVersion, "version 0"},
		{"no version", file("nov.json", []byte(`{"tick":5}`)), nil, "no version"},
		{"garbage", file("garbage.json", []byte("\x00\xffPK\x03\x04 not json")), nil, "not a desync report"},
		{"truncated", file("trunc.json", goodBytes[:len(goodBytes)/2]), nil, "truncated"},
		{"empty", file("empty.json", nil), nil, "empty"},
		{"unknown field", file("unknown.json", []byte(`{"version":1,"colour":"red"}`)), nil, "unknown field"},
		{"wrong type", file("type.json", []byte(`{"version":1,"tick":"soon"}`)), nil, "not a desync report"},
		{"trailing", file("trailing.json", append(slices.Clone(goodBytes), "{}"...)), nil, "not a desync report"},
		{"array", file("array.json", []byte(`[1,2]`)), nil, "not a desync report"},
		{"folder", dir, nil, "not a regular file"},
		{"missing", filepath.Join(dir, "missing.json"), os.ErrNotExist, "missing.json"},
	} {
		r, err := Read(tc.path)
		if err == nil {
			t.Errorf("%s: read %+v", tc.name, r)
			continue
		}
		if tc.is != nil && !errors.Is(err, tc.is) {
			t.Errorf("%s: %v is not %v", tc.name, err, tc.is)
		}
		if !strings.Contains(err.Error(), tc.says) || !strings.Contains(err.Error(), tc.path) {
			t.Errorf("%s: error %q should say %q and name the file", tc.name, err, tc.says)
		}
	}
}

func TestListToleratesCorrupt(t *testing.T) {
	dir := t.TempDir()
	t0 := time.Date(2025, 2, 2, 2, 2, 2, 0, time.UTC)
	first, err := Write(dir, sample(t0, 10, 1))
	if err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, fileName(t0.Add(time.Minute), 20, 1))
	if err := os.WriteFile(bad, []byte(`{"version":1,"tick":`), 0o644); err != nil {
		t.Fatal(err)
	}
	last, err := Write(dir, sample(t0.Add(time.Hour), 30, 2))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "README"), []byte("not a report"), 0o644)

	es, err := List(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(es) != 3 {
		t.Fatalf("%d entries, want 3", len(es))
	}
	if es[0].Path != first || es[0].Err != nil || es[0].Report.Tick != 10 {
		t.Errorf("first: %+v", es[0])
	}
	if es[1].Path != bad || es[1].Err == nil || es[1].Report != nil || !strings.Contains(es[1].Err.Error(), "truncated") {
		t.Errorf("corrupt: %+v", es[1])
	}
	if es[2].Path != last || es[2].Err != nil || es[2].Report.Tick != 30 {
		t.Errorf("last: %+v", es[2])
	}

	if es, err := List(filepath.Join(dir, "none")); err != nil || len(es) != 0 {
		t.Fatalf("missing folder: %v %v", es, err)
	}
	if _, err := List(first); err == nil {
		t.Fatal("a file listed as a folder")
	}
}

func TestDiffParts(t *testing.T) {
	r := sample(time.Now(), 10, 1)
	r.Maps = append(r.Maps, MapCheck{ID: 3, Host: 1, Client: 2}, MapCheck{ID: 4, Host: 5, Client: 5, Match: true})
	r.MapIDs = []int32{2, 3, 7}
	want := []string{"map 2: things, things rows q2", "map 3", "map 7"}
	if got := r.DiffParts(); !slices.Equal(got, want) {
		t.Fatalf("DiffParts = %q, want %q", got, want)
	}
	world := &Report{Scope: ScopeWorld, Maps: []MapCheck{{ID: 1, Host: 1, Client: 1, Match: true}}}
	if got := world.DiffParts(); len(got) != 0 {
		t.Fatalf("world-only DiffParts = %q", got)
	}
}

func TestRecords(t *testing.T) {
	cmds := []lockstep.Command{{Tick: 1, Seq: 2, MapID: -1, Kind: 0xFF00, Player: 4, Payload: []byte("x")}, {Tick: 9}}
	recs := Records(cmds)
	for i, r := range recs {
		if !reflect.DeepEqual(r.Command(), cmds[i]) {
			t.Fatalf("%d: %+v -> %+v", i, cmds[i], r.Command())
		}
	}
	if Records(nil) != nil {
		t.Fatal("Records(nil) is not nil")
	}
}

func TestWriteEmptyLists(t *testing.T) {
	path, err := Write(t.TempDir(), &Report{Scope: ScopeWorld, Repair: RepairDrop})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	for _, want := range []string{`"map_ids": []`, `"maps": []`, `"commands": []`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("JSON lacks %s:\n%s", want, b)
		}
	}
	if _, err := Read(path); err != nil {
		t.Fatal(err)
	}
}
