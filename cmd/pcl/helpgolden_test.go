package main

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

var updateHelp = flag.Bool("update-help", false, "rewrite testdata/help from this tree's -h output")

// TestConfigCommandsHelpGolden pins the -h output of every command that registers the config's
// flags: their names, argument names, defaults and help text as a user reads them. The files were
// written from the hand-written registration before the flags were derived from the struct's
// tags; a command's own flags are in them too, so a change to those is rewritten with -update-help.
func TestConfigCommandsHelpGolden(t *testing.T) {
	for _, args := range [][]string{{"train"}, {"bench"}, {"diagnose"}, {"compare"}, {"sweep", "plan"}} {
		name := strings.Join(args, "-")
		t.Run(name, func(t *testing.T) {
			var o, e bytes.Buffer
			if code := runMain(context.Background(), append(args, "-h"), &o, &e); code != exitOK {
				t.Fatalf("pcl %s -h: exit %d", strings.Join(args, " "), code)
			}
			path := filepath.Join("testdata", "help", name+".txt")
			if *updateHelp {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, e.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if got := e.String(); got != string(want) {
				t.Errorf("pcl %s -h changed (-update-help rewrites %s):\n%s", strings.Join(args, " "), path, lineDiff(string(want), got))
			}
		})
	}
}

// lineDiff lists the lines only in want (-) and only in got (+).
func lineDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var b strings.Builder
	for _, l := range w {
		if !slices.Contains(g, l) {
			b.WriteString("- " + l + "\n")
		}
	}
	for _, l := range g {
		if !slices.Contains(w, l) {
			b.WriteString("+ " + l + "\n")
		}
	}
	return b.String()
}
