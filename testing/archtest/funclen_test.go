package archtest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// maxFuncLines is the longest a function may be, from its signature to
// its closing brace.
const maxFuncLines = 80

// knownLong are the functions still over maxFuncLines when the guard was
// extended from five packages to every one: known long, to split into
// named steps. An entry goes when its function is split (the test fails
// on an entry that is no longer long), and nothing may be added here.
// Keys are "folder/file.go: function".
var knownLong = map[string]bool{}

// TestFunctionsShort fails for any function of the module's non-test Go
// files (every package, the tools and scripts included) longer than
// maxFuncLines: a long function becomes named steps.
func TestFunctionsShort(t *testing.T) {
	root := filepath.Join("..", "..")
	checked, dirs := 0, map[string]bool{}
	seen := map[string]bool{}
	err := filepath.WalkDir(root, func(name string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name != root && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".") || strings.HasPrefix(d.Name(), "_")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		rel, err := filepath.Rel(root, name)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		for fn, n := range longFuncs(t, name) {
			key := rel + ": " + fn
			seen[key] = true
			if !knownLong[key] {
				t.Errorf("%s is %d lines, over %d", key, n, maxFuncLines)
			}
		}
		checked++
		dirs[filepath.Dir(rel)] = true
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 200 || len(dirs) < 40 {
		t.Fatalf("only %d files in %d folders checked: the walk is wrong", checked, len(dirs))
	}
	for key := range knownLong {
		if !seen[key] {
			t.Errorf("%s is listed as known long but is not (any more): remove it from knownLong", key)
		}
	}
}

// longFuncs returns the functions of one file longer than maxFuncLines.
func longFuncs(t *testing.T, name string) map[string]int {
	t.Helper()
	fs := token.NewFileSet()
	f, err := parser.ParseFile(fs, name, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	long := map[string]int{}
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok {
			continue
		}
		if n := fs.Position(fd.End()).Line - fs.Position(fd.Pos()).Line + 1; n > maxFuncLines {
			long[fd.Name.Name] = n
		}
	}
	return long
}

// TestLongFuncsCounts checks the measure itself on a function of known
// length, so the rule cannot pass by measuring nothing.
func TestLongFuncsCounts(t *testing.T) {
	src := "package x\n\nfunc long() {\n" + strings.Repeat("\t_ = 1\n", maxFuncLines-1) + "}\n\nfunc short() {}\n"
	name := filepath.Join(t.TempDir(), "x.go")
	if err := os.WriteFile(name, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	got := longFuncs(t, name)
	if len(got) != 1 || got["long"] != maxFuncLines+1 {
		t.Fatalf("longFuncs = %v, want long at %d lines", got, maxFuncLines+1)
	}
}
