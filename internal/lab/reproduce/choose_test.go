package reproduce

import (
	"strings"
	"testing"

	"github.com/sparsepcl/sparsepcl/agent/provenance"
)

// Choose re-runs with this binary only when it is the run's commit, clean, or when asked
// (--here); it rebuilds the run's commit otherwise, and refuses, naming what is missing, a run
// whose binary was unstamped, or built from a modified tree.
func TestChoose(t *testing.T) {
	yes, no := true, false
	const a, b = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
	for _, tc := range []struct {
		name string
		s    provenance.Session
		mine Stamp
		here bool
		want Choice
		says string // the error's
	}{
		{"same commit", provenance.Session{BinaryCommit: a, BinaryDirty: &no}, Stamp{Commit: a}, false, Choice{Self: true}, ""},
		{"another commit: rebuild it", provenance.Session{BinaryCommit: a, BinaryDirty: &no}, Stamp{Commit: b}, false, Choice{Commit: a}, ""},
		{"this binary unstamped: rebuild", provenance.Session{BinaryCommit: a, BinaryDirty: &no}, Stamp{}, false, Choice{Commit: a}, ""},
		{"this binary modified: rebuild", provenance.Session{BinaryCommit: a, BinaryDirty: &no}, Stamp{Commit: a, Modified: true}, false, Choice{Commit: a}, ""},
		{"older run.json: the stamp in commit", provenance.Session{Commit: a, Dirty: &no, CommitSource: "build"}, Stamp{Commit: b}, false, Choice{Commit: a}, ""},
		{"--here across versions", provenance.Session{BinaryCommit: a, BinaryDirty: &no}, Stamp{Commit: b}, true, Choice{Self: true, Across: true}, ""},
		{"--here, same commit", provenance.Session{BinaryCommit: a, BinaryDirty: &no}, Stamp{Commit: a}, true, Choice{Self: true}, ""},
		{"--here, unstamped run", provenance.Session{Commit: a, Dirty: &yes, CommitSource: "git /x"}, Stamp{Commit: a}, true, Choice{Self: true, Across: true}, ""},
		{"unstamped run", provenance.Session{Commit: a, Dirty: &yes, CommitSource: "git /x"}, Stamp{Commit: b}, false, Choice{}, "no binary_commit; it ran in a work tree at " + a + " with changes"},
		{"dirty binary", provenance.Session{BinaryCommit: a, BinaryDirty: &yes}, Stamp{Commit: a}, false, Choice{}, "modified tree of commit " + a + " (binary_dirty true)"},
		{"dirtiness unknown", provenance.Session{BinaryCommit: a}, Stamp{Commit: a}, false, Choice{}, "no binary_dirty"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Choose(tc.s, tc.mine, tc.here)
			if tc.says != "" {
				if err == nil || !strings.Contains(err.Error(), tc.says) {
					t.Fatalf("Choose: %+v, %v; want an error saying %q", got, err, tc.says)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("Choose: %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
}
