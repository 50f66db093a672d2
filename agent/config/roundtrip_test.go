package config

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestCommittedConfigsRoundTrip reads the config.json of every committed run and writes it back:
// a file that holds every field Config writes today must come back byte for byte, so the run
// directories on disk (and the runs resuming from them) keep their config.json whatever the
// layout of Config in Go. Older files, written before some field existed, gain it on rewrite.
func TestCommittedConfigsRoundTrip(t *testing.T) {
	var files []string
	err := filepath.WalkDir("../../docs/results", func(path string, d fs.DirEntry, err error) error {
		if err == nil && d.Name() == "config.json" {
			files = append(files, path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	keys := func(b []byte) []string {
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		return slices.Sorted(maps.Keys(m))
	}
	var current []string
	dir := t.TempDir()
	for _, path := range files {
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		c, err := ReadFile(path)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		out := filepath.Join(dir, "config.json")
		if err := c.WriteFile(out); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(keys(got), keys(want)) {
			continue // written by an older version, without some field
		}
		current = append(current, path)
		if !bytes.Equal(got, want) {
			t.Errorf("%s: rewritten differently:\n%s\nwant:\n%s", path, got, want)
		}
	}
	// The files this test must cover: the HalfCheetah paper runs (still resuming) and a Copy run.
	for _, want := range []string{"halfcheetah-paper/runs/grid3-sparse-a0.01-s1/", "large-actions/levers/copy-rmsprop-s3/"} {
		if !slices.ContainsFunc(current, func(p string) bool { return strings.Contains(p, want) }) {
			t.Errorf("no current config.json under %s among %d files", want, len(current))
		}
	}
}

// jsonOrder names every field of Config once, so that config.json's order is the listed one and a
// new field cannot land in the middle of it unnoticed.
func TestJSONOrderListsEveryField(t *testing.T) {
	var names []string
	for _, f := range fields(Default()) {
		names = append(names, f.name)
	}
	if !slices.Equal(names, jsonOrder) {
		t.Errorf("fields in order %v,\njsonOrder %v", names, jsonOrder)
	}
}
