package archtest

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// maxReadme is the most README.md may hold: a newcomer's five minutes.
// The rest lives under docs/, a page per audience.
const maxReadme = 8 << 10

// TestDocsByAudience: README.md stays short and links every page under
// docs/, and each page says in its first line whom it is for.
func TestDocsByAudience(t *testing.T) {
	root := filepath.Join("..", "..")
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if len(readme) > maxReadme {
		t.Errorf("README.md is %d bytes, over %d: move the detail to a page under docs/", len(readme), maxReadme)
	}
	pages, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	if len(pages) < 5 {
		t.Fatalf("only %d pages under docs/", len(pages))
	}
	forWhom := regexp.MustCompile(`(?i)^\*?for [^:]+:`)
	for _, page := range pages {
		name := "docs/" + filepath.Base(page)
		if !strings.Contains(string(readme), "("+name+")") && !strings.Contains(string(readme), "("+name+"#") {
			t.Errorf("README.md does not link %s", name)
		}
		f, err := os.Open(page)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		sc.Scan()
		first := sc.Text()
		f.Close()
		if !forWhom.MatchString(first) {
			t.Errorf("%s's first line does not say whom it is for (\"*For ...: ...\"): %q", name, first)
		}
	}
}
