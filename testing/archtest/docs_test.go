package archtest

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
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

// TestReleaseReadmeLinks: the README.txt a release archive carries
// (scripts/release-readme.txt) points only at pages under docs/ that
// exist and at headings they have, whether it names the page as
// docs/NAME.md#anchor or by its address on GitHub; and it says how to
// leave the join tool (quit, Ctrl-D). README.md's links into docs/ are
// held to the same rule.
func TestReleaseReadmeLinks(t *testing.T) {
	root := filepath.Join("..", "..")
	txt, err := os.ReadFile(filepath.Join(root, "scripts", "release-readme.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if n := checkDocLinks(t, root, "scripts/release-readme.txt", string(txt)); n == 0 {
		t.Error("scripts/release-readme.txt links no page under docs/: the test has nothing to check")
	}
	words := strings.Join(strings.Fields(string(txt)), " ")
	for _, w := range []string{"quit", "Ctrl-D"} {
		if !strings.Contains(words, w) {
			t.Errorf("scripts/release-readme.txt does not say how to leave the join tool: no %q", w)
		}
	}
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	checkDocLinks(t, root, "README.md", string(readme))
}

// docLink is a link to a page under docs/, by its path in the repository
// (docs/NAME.md) or its address on GitHub, with an optional #anchor.
var docLink = regexp.MustCompile(`(?:https://github\.com/[\w.-]+/[\w.-]+/(?:blob|tree)/[\w.-]+/)?\b(docs/[\w.-]+\.md)(#[\w-]*)?`)

// checkDocLinks checks each docs/ link in text (from the file name) and
// returns how many it found: the page exists and, for a link with an
// anchor, has a heading of that anchor.
func checkDocLinks(t *testing.T, root, name, text string) int {
	t.Helper()
	anchors := map[string]map[string]bool{}
	found := docLink.FindAllStringSubmatch(text, -1)
	for _, m := range found {
		page, anchor := m[1], strings.TrimPrefix(m[2], "#")
		if anchors[page] == nil {
			b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(page)))
			if err != nil {
				t.Errorf("%s links %s: %v", name, m[0], err)
				anchors[page] = map[string]bool{}
				continue
			}
			anchors[page] = headingAnchors(string(b))
		}
		if anchor != "" && !anchors[page][anchor] {
			t.Errorf("%s links %s: %s has no heading with the anchor #%s", name, m[0], page, anchor)
		}
	}
	return len(found)
}

// headingAnchors are the anchors GitHub gives the headings of a markdown
// page: the heading's text in lower case, with its markup and
// punctuation but hyphens dropped and spaces made hyphens; a second
// heading of the same anchor gets -1, a third -2. Lines in fenced code
// are no headings.
func headingAnchors(page string) map[string]bool {
	heading := regexp.MustCompile(`^#{1,6}[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$`)
	link := regexp.MustCompile(`!?\[([^\]]*)\]\([^)]*\)`)
	punct := regexp.MustCompile(`[^\p{L}\p{M}\p{N}\p{Pc} -]`)
	out := map[string]bool{}
	seen := map[string]int{}
	fence := ""
	for line := range strings.Lines(page) {
		line = strings.TrimRight(line, "\r\n")
		trimmed := strings.TrimLeft(line, " ")
		if fence != "" {
			if strings.HasPrefix(trimmed, fence) {
				fence = ""
			}
			continue
		}
		if strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~") {
			fence = trimmed[:3]
			continue
		}
		m := heading.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		text := link.ReplaceAllString(m[1], "$1")
		text = strings.NewReplacer("`", "", "*", "").Replace(text)
		a := strings.ReplaceAll(punct.ReplaceAllString(strings.ToLower(text), ""), " ", "-")
		if n := seen[a]; n > 0 {
			out[a+"-"+strconv.Itoa(n)] = true
		} else {
			out[a] = true
		}
		seen[a]++
	}
	return out
}

// TestDocsLinkEachOther: every link from one page under docs/ to another
// (NAME.md, NAME.md#anchor) or to a heading of its own (#anchor) names a
// page that exists and a heading it has, so a renamed section is caught.
func TestDocsLinkEachOther(t *testing.T) {
	dir := filepath.Join("..", "..", "docs")
	pages, err := filepath.Glob(filepath.Join(dir, "*.md"))
	if err != nil || len(pages) == 0 {
		t.Fatalf("no pages under docs/: %v", err)
	}
	anchors := map[string]map[string]bool{}
	for _, p := range pages {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		anchors[filepath.Base(p)] = headingAnchors(string(b))
	}
	link := regexp.MustCompile(`\]\(([\w.-]+\.md)?(#[\w-]+)?\)`)
	checked := 0
	for _, p := range pages {
		b, _ := os.ReadFile(p)
		from := filepath.Base(p)
		for _, m := range link.FindAllStringSubmatch(string(b), -1) {
			page, anchor := m[1], strings.TrimPrefix(m[2], "#")
			if page == "" && anchor == "" {
				continue
			}
			if page == "" {
				page = from
			}
			checked++
			heads, ok := anchors[page]
			switch {
			case !ok:
				t.Errorf("docs/%s links %s: no such page under docs/", from, m[0][1:])
			case anchor != "" && !heads[anchor]:
				t.Errorf("docs/%s links %s: docs/%s has no heading with the anchor #%s", from, m[0][1:], page, anchor)
			}
		}
	}
	if checked == 0 {
		t.Error("no links between the pages under docs/: the test has nothing to check")
	}
}
