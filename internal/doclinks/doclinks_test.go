package doclinks

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// Broken paths and fragments that name no heading (GitHub's anchors: punctuation dropped, a
// repeated heading numbered, headings inside fenced code not counted) are found; the rest pass.
func TestCheckFindsBrokenLinks(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "docs", "results"), 0o755); err != nil {
		t.Fatal(err)
	}
	pages := map[string]string{
		"docs/a.md":            "# Part\n\n## 6. Beyond the paper's data use (issue 51)\n\n## Part\n\n```\n# not a heading\n```\n",
		"docs/results/fig.png": "",
	}
	for f, text := range pages {
		if err := os.WriteFile(filepath.Join(root, f), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	readme := strings.Join([]string{
		"[a](docs/a.md) and ![fig](docs/results/fig.png) and [dir](docs/results)",
		"[gone](docs/b.md) [anchor](#results) [web](https://example.com/x) [frag](docs/a.md#part)",
		"```", "[in code](nowhere.md)", "```",
		`![titled](docs/missing.png "a title")`,
		"## Results",
		"[punctuation](docs/a.md#6-beyond-the-papers-data-use-issue-51) [second](docs/a.md#part-1) [code](docs/a.md#not-a-heading) [here](#nowhere) [renamed](docs/a.md#parts)",
	}, "\n")
	if err := os.WriteFile(filepath.Join(root, "README.md"), []byte(readme), 0o644); err != nil {
		t.Fatal(err)
	}
	// A page in docs/ links relative to itself.
	if err := os.WriteFile(filepath.Join(root, "docs", "page.md"), []byte("[up](../README.md) [fig](results/fig.png) [bad](a.png)"), 0o644); err != nil {
		t.Fatal(err)
	}
	broken, err := Check(root, "README.md", "docs/page.md")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, b := range broken {
		got = append(got, b.String())
	}
	want := []string{"README.md:2: docs/b.md does not exist", "README.md:6: docs/missing.png does not exist",
		"README.md:8: docs/a.md#not-a-heading names no heading", "README.md:8: #nowhere names no heading", "README.md:8: docs/a.md#parts names no heading",
		"docs/page.md:1: a.png does not exist"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("broken links:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if _, err := Check(root, "nope.md"); err == nil {
		t.Error("a missing page: no error")
	}
}

// The repository's own pages: every relative link of the README and of docs/*.md resolves, and the
// README stays a front door of at most 150 lines.
func TestRepositoryLinks(t *testing.T) {
	root := filepath.Join("..", "..")
	pages := []string{"README.md"}
	docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	results, err := filepath.Glob(filepath.Join(root, "docs", "results", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range append(docs, results...) {
		rel, err := filepath.Rel(root, p)
		if err != nil {
			t.Fatal(err)
		}
		pages = append(pages, filepath.ToSlash(rel))
	}
	broken, err := Check(root, pages...)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range broken {
		t.Error(b)
	}
	data, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(data), "\n"); n > 150 {
		t.Errorf("README.md has %d lines, the front door's limit is 150: move detail into docs/", n)
	}
}

// The front door shows the two commands (the main job and the test command that .ci/run calls)
// within its first 30 lines.
func TestReadmeShowsTheTwoCommandsFirst(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(data), "\n")
	top := strings.Join(lines[:min(30, len(lines))], "\n")
	for _, cmd := range []string{"bash scripts/run", "bash scripts/test"} {
		if !strings.Contains(top, cmd) {
			t.Errorf("README.md does not show %q in its first 30 lines", cmd)
		}
	}
}

// The user-facing pages (README.md, docs/*.md) name features and results, not the tracker's issue
// numbers; the results folders' records (docs/results/) keep theirs.
func TestUserDocsNameNoIssueNumbers(t *testing.T) {
	root := filepath.Join("..", "..")
	pages, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	issue := regexp.MustCompile(`(?i)\bissues?[ -]\d+`)
	for _, p := range append(pages, filepath.Join(root, "README.md")) {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(data), "\n") {
			if m := issue.FindString(line); m != "" {
				t.Errorf("%s:%d: %q: name the feature or result instead", filepath.Base(p), i+1, m)
			}
		}
	}
}
