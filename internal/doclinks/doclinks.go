// Package doclinks checks the relative links of the project's Markdown pages: every
// [text](target) and ![alt](target) that is not a URL must name a file or directory of the
// repository, and a #fragment must name a heading of the Markdown page it points into (by
// GitHub's anchors), so that the README and docs/ never point at something moved or renamed.
package doclinks

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"unicode"
)

// link matches a Markdown link or image target: ](target) or ](target "title").
var link = regexp.MustCompile(`\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)

// Broken is a link whose target does not exist, or whose fragment names no heading.
type Broken struct {
	File   string // the page, relative to the root
	Line   int
	Target string
	Why    string // "does not exist" or "names no heading"
}

func (b Broken) String() string {
	return fmt.Sprintf("%s:%d: %s %s", b.File, b.Line, b.Target, b.Why)
}

// Anchor is GitHub's anchor of a Markdown heading's text: lower case, every character but
// letters, digits, spaces, hyphens and underscores dropped, spaces made hyphens.
func Anchor(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(heading)) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// anchors are the anchors of the headings of a Markdown page (outside fenced code), a repeated
// one numbered as GitHub numbers it (name, name-1, name-2, ...).
func anchors(page string) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	fenced := false
	for _, line := range strings.Split(page, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		text, ok := strings.CutPrefix(line, "#")
		if fenced || !ok {
			continue
		}
		text = strings.TrimLeft(text, "#")
		if !strings.HasPrefix(text, " ") {
			continue
		}
		a := Anchor(text)
		if n := seen[a]; n > 0 {
			out[a+"-"+strconv.Itoa(n)] = true
		} else {
			out[a] = true
		}
		seen[a]++
	}
	return out
}

// Check returns the broken relative links of the Markdown files (paths relative to root): a
// target that does not exist, or a #fragment that names no heading of the Markdown page it points
// into (the page itself for "#..."). Links inside fenced code blocks are ignored.
func Check(root string, files ...string) ([]Broken, error) {
	var out []Broken
	for _, f := range files {
		data, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			return nil, fmt.Errorf("doclinks: %w", err)
		}
		fenced := false
		for i, line := range strings.Split(string(data), "\n") {
			if strings.HasPrefix(strings.TrimSpace(line), "```") {
				fenced = !fenced
				continue
			}
			if fenced {
				continue
			}
			for _, m := range link.FindAllStringSubmatch(line, -1) {
				if why := resolve(root, f, string(data), m[1]); why != "" {
					out = append(out, Broken{File: f, Line: i + 1, Target: m[1], Why: why})
				}
			}
		}
	}
	return out, nil
}

// resolve says why target, linked from page f (whose text is page), does not resolve ("" when it
// does): a URL is not checked; a path must exist under root; a fragment must name a heading of
// the Markdown page it points into.
func resolve(root, f, page, target string) string {
	if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
		return ""
	}
	path, frag, _ := strings.Cut(target, "#")
	into := page
	if path != "" {
		full := filepath.Join(root, filepath.Dir(f), filepath.FromSlash(path))
		if _, err := os.Stat(full); err != nil {
			return "does not exist"
		}
		if frag == "" || !strings.HasSuffix(path, ".md") {
			return ""
		}
		data, err := os.ReadFile(full)
		if err != nil {
			return "does not exist"
		}
		into = string(data)
	}
	if frag != "" && !anchors(into)[frag] {
		return "names no heading"
	}
	return ""
}
