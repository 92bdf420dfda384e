package archtest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// maxFuncLines is the longest a function in the core packages may be,
// from its signature to its closing brace.
const maxFuncLines = 100

// corePackages are the packages whose functions must stay short: the
// network, lockstep and snapshot code that the next person reads first.
var corePackages = []string{"host", "join", "wire", "snapshot", "lockstep"}

// TestCoreFunctionsShort fails for any function in a core package longer
// than maxFuncLines: a long function becomes named steps.
func TestCoreFunctionsShort(t *testing.T) {
	checked := 0
	for _, pkg := range corePackages {
		files, err := filepath.Glob(filepath.Join("..", "..", pkg, "*.go"))
		if err != nil || len(files) == 0 {
			t.Fatalf("no Go files for %s: %v", pkg, err)
		}
		for _, name := range files {
			if strings.HasSuffix(name, "_test.go") {
				continue
			}
			for fn, n := range longFuncs(t, name) {
				t.Errorf("%s: %s is %d lines, over %d", filepath.ToSlash(filepath.Join(pkg, filepath.Base(name))), fn, n, maxFuncLines)
			}
			checked++
		}
	}
	if checked < 20 {
		t.Fatalf("only %d files checked: the package paths are wrong", checked)
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
