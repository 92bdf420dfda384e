package corpus

import (
	"context"
	"flag"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/lockhost/lockhost/wire"
)

var update = flag.Bool("update", false, "rewrite the recorded seed corpora of every fuzz target from this run's session")

const (
	// moduleRoot is the repository root from this package's folder.
	moduleRoot = "../.."
	// realMods are the real mod folders the defs tests read, beside the
	// repository; their def files join the seeds when they are there.
	realMods = "../../../shared/testdata/real-mods"
	// corpusBudget caps the committed recorded seeds of all targets.
	corpusBudget = 2 << 20
)

// TestRecordedCorpus records a real session and checks that the committed
// seed corpora cover it: every target has recorded seeds that are valid
// inputs, every packet ID and command kind seen on the wire has a seed,
// and every seed file (Go's own included) has the target's argument
// types. With -update it first rewrites the recorded seeds.
func TestRecordedCorpus(t *testing.T) {
	rec, err := Record(context.Background(), Options{RealMods: realMods})
	if err != nil {
		t.Fatal(err)
	}
	a, err := Analyze(rec)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("recorded %d connections, %d world payloads, %d commands; packet IDs seen: %v", len(rec.Conns), len(a.Transfers), len(a.Commands), a.IDs)

	if _, err := os.Stat(realMods); err != nil {
		t.Logf("no real mods at %s: only the embedded content's def files are recorded", realMods)
	}

	targets := Targets()
	fresh := make([][][]byte, len(targets))
	for i, tg := range targets {
		checkSignature(t, tg)
		seeds, err := tg.Seeds(a)
		if err != nil {
			t.Fatal(err)
		}
		if len(seeds) == 0 {
			t.Errorf("%s: the recording gave no seed", tg)
		}
		for _, s := range seeds {
			args, err := Unmarshal(s)
			if err == nil {
				err = tg.Check(args)
			}
			if err != nil {
				t.Errorf("%s: recorded seed %s is not a valid input: %v", tg, FileName(s), err)
			}
		}
		fresh[i] = seeds
	}
	if t.Failed() {
		return
	}
	if *update {
		for i, tg := range targets {
			written, removed, err := WriteDir(tg.Dir(moduleRoot), fresh[i])
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: %d seeds recorded, %d files written, %d stale removed", tg, len(fresh[i]), written, removed)
		}
	}

	total := 0
	var decodeIDs []wire.ID
	var kinds []uint16
	for _, tg := range targets {
		files, size := checkCommitted(t, tg)
		total += size
		t.Logf("%s: %d recorded seed files, %d bytes", tg, len(files), size)
		for _, args := range files {
			switch tg.String() {
			case "wire.FuzzDecode":
				decodeIDs = append(decodeIDs, wire.ID(args[0].(byte)))
			case "game/colony.FuzzApply":
				kinds = append(kinds, args[0].(uint16))
			}
		}
	}
	for _, id := range a.IDs {
		if !slices.Contains(decodeIDs, id) {
			t.Errorf("packet %s (%d) was seen on the wire but has no recorded wire.FuzzDecode seed; run scripts/record-corpus", id, id)
		}
	}
	sent := map[uint16]bool{}
	for _, c := range a.Commands {
		if !sent[c.Kind] && !slices.Contains(kinds, c.Kind) {
			t.Errorf("command kind %d was sent but has no recorded game/colony.FuzzApply seed; run scripts/record-corpus", c.Kind)
		}
		sent[c.Kind] = true
	}
	if total > corpusBudget {
		t.Errorf("recorded seeds take %d bytes, over the budget of %d", total, corpusBudget)
	}
	t.Logf("recorded seeds: %d bytes in all", total)
}

// checkCommitted checks every seed file in a target's folder: each must
// be in the fuzz format with the target's argument types, and the
// recorded ones must be valid inputs. It returns the recorded seeds'
// arguments and their size on disk.
func checkCommitted(t *testing.T, tg Target) (recorded [][]any, size int) {
	t.Helper()
	dir := tg.Dir(moduleRoot)
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Errorf("%s: %v; run scripts/record-corpus", tg, err)
		return nil, 0
	}
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		args, err := Unmarshal(b)
		if err != nil {
			t.Errorf("%s: seed file %s: %v", tg, e.Name(), err)
			continue
		}
		if !IsRecorded(e.Name()) {
			if err := (Target{Pkg: tg.Pkg, Name: tg.Name, Args: tg.Args}).Check(args); err != nil {
				t.Errorf("%s: seed file %s: %v", tg, e.Name(), err)
			}
			continue
		}
		if FileName(b) != e.Name() {
			t.Errorf("%s: recorded seed file %s is named for other contents (%s)", tg, e.Name(), FileName(b))
		}
		if err := tg.Check(args); err != nil {
			t.Errorf("%s: recorded seed file %s is no longer a valid input (%v); run scripts/record-corpus", tg, e.Name(), err)
			continue
		}
		recorded = append(recorded, args)
		size += len(b)
	}
	if len(recorded) == 0 {
		t.Errorf("%s: no recorded seed files in %s; run scripts/record-corpus", tg, dir)
	}
	return recorded, size
}

// checkSignature checks that the target's fuzz function in its package's
// tests takes the arguments the recorder writes.
func checkSignature(t *testing.T, tg Target) {
	t.Helper()
	dir := filepath.Join(moduleRoot, filepath.FromSlash(tg.Pkg))
	files, err := filepath.Glob(filepath.Join(dir, "*_test.go"))
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, name := range files {
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Recv != nil || fd.Name.Name != tg.Name || fd.Body == nil {
				continue
			}
			got, ok := fuzzArgs(fd.Body)
			if !ok {
				t.Errorf("%s: no f.Fuzz call with a function literal", tg)
				return
			}
			if !slices.Equal(normalize(got), normalize(tg.Args)) {
				t.Errorf("%s: the fuzz function takes %v, the recorder writes %v", tg, got, tg.Args)
			}
			return
		}
	}
	t.Errorf("%s: no function %s in %s", tg, tg.Name, dir)
}

// fuzzArgs are the argument types, after *testing.T, of the function
// literal passed to the first .Fuzz call in body.
func fuzzArgs(body *ast.BlockStmt) (args []string, found bool) {
	ast.Inspect(body, func(n ast.Node) bool {
		if found {
			return false
		}
		call, ok := n.(*ast.CallExpr)
		if !ok || len(call.Args) != 1 {
			return true
		}
		sel, ok := call.Fun.(*ast.SelectorExpr)
		lit, isLit := call.Args[0].(*ast.FuncLit)
		if !ok || sel.Sel.Name != "Fuzz" || !isLit {
			return true
		}
		found = true
		for i, field := range lit.Type.Params.List {
			n := max(1, len(field.Names))
			for range n {
				if i == 0 && len(args) == 0 && types.ExprString(field.Type) == "*testing.T" {
					continue
				}
				args = append(args, types.ExprString(field.Type))
			}
		}
		return false
	})
	return args, found
}

// normalize spells byte as uint8 and rune as int32.
func normalize(ts []string) []string {
	out := make([]string, len(ts))
	for i, s := range ts {
		s = strings.ReplaceAll(s, "byte", "uint8")
		out[i] = strings.ReplaceAll(s, "rune", "int32")
	}
	return out
}

// TestAllIDsFollowRegistry holds the packets a recording must carry to
// the wire registry: every registered packet but Server_Disconnect and
// relay mode's three.
func TestAllIDsFollowRegistry(t *testing.T) {
	skip := map[wire.ID]bool{wire.IDServerDisconnect: true,
		wire.IDClientUpload: true, wire.IDServerUploadRequest: true, wire.IDServerUploadResult: true}
	var want []wire.ID
	for _, id := range wire.IDs() {
		if !skip[id] {
			want = append(want, id)
		}
	}
	if got := allIDs(); !slices.Equal(got, want) {
		t.Errorf("allIDs() = %v,\nwant %v", got, want)
	}
}
