// Package doclinks checks the relative links of the project's Markdown pages: every
// [text](target) and ![alt](target) that is not a URL or an in-page anchor must name a file or
// directory of the repository, so that the README and docs/ never point at something moved away.
package doclinks

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// link matches a Markdown link or image target: ](target) or ](target "title").
var link = regexp.MustCompile(`\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)

// Broken is a link whose target does not exist.
type Broken struct {
	File   string // the page, relative to the root
	Line   int
	Target string
}

func (b Broken) String() string {
	return fmt.Sprintf("%s:%d: %s does not exist", b.File, b.Line, b.Target)
}

// Check returns the broken relative links of the Markdown files (paths relative to root). Links
// inside fenced code blocks are ignored, and a target's #fragment is dropped.
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
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "#") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				target, _, _ = strings.Cut(target, "#")
				path := filepath.Join(root, filepath.Dir(f), filepath.FromSlash(target))
				if _, err := os.Stat(path); err != nil {
					out = append(out, Broken{File: f, Line: i + 1, Target: m[1]})
				}
			}
		}
	}
	return out, nil
}
