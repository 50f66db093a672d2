// Package goldens reads the manifest of the golden runs (cmd/pcl/testdata/golden/goldens.json):
// the short fixed-seed runs whose metrics and final checkpoint every build must reproduce bit
// for bit, the shipped default each one pins, what was shrunk to keep it short, the committed
// runs whose arithmetic it covers, and, per binary commit of those runs, whether the code that
// recorded the golden reproduced one of them. From it and the committed runs' run.json files it
// renders the provenance table of docs/results/REPRODUCE.md.
package goldens

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// DefaultPath is the manifest's path relative to the repository's root.
const DefaultPath = "cmd/pcl/testdata/golden/goldens.json"

// Golden is one golden run.
type Golden struct {
	Name   string   `json:"name"`
	Remote bool     `json:"remote,omitempty"` // needs the Python env server (MuJoCo)
	Args   []string `json:"args"`             // pcl train's flags after --out, --seed 1 and --progress-every 0
	// File is the golden file's name when another golden's (default: Name).
	File string `json:"file,omitempty"`
	// Pins says which shipped default or committed configuration the run is, and Shrunk what
	// was made smaller to keep it short (ShrunkKeys: those config.json keys).
	Pins       string   `json:"pins"`
	Shrunk     string   `json:"shrunk,omitempty"`
	ShrunkKeys []string `json:"shrunk_keys,omitempty"`
	// Covers are globs, relative to the repository's root, of the committed runs whose
	// config.json equals this run's but for ShrunkKeys (and the seed): their arithmetic.
	Covers []string `json:"covers,omitempty"`
	// Verified holds, per binary commit of the covered runs, a re-run of one of them by the code
	// that recorded the golden (pcl reproduce --here).
	Verified []Verification `json:"verified,omitempty"`
}

// Verification is the outcome of re-running one covered run by the code that recorded a golden.
type Verification struct {
	Commit string `json:"commit"` // the run's binary commit
	Run    string `json:"run"`
	Iters  int    `json:"iters"`
	// Result is pcl reproduce's verdict: "identical for N iterations ..." or "the runs part at
	// iteration I, column C: ...".
	Result string `json:"result"`
	// GoldenSHA256 is the golden file's hash when this was verified: a rerecorded golden
	// leaves its verifications stale.
	GoldenSHA256 string `json:"golden_sha256"`
}

// Identical reports whether the verification found the run reproduced.
func (v Verification) Identical() bool { return strings.HasPrefix(v.Result, "identical") }

// FileName is the golden file's name (without the directory).
func (g Golden) FileName() string {
	if g.File != "" {
		return g.File + ".txt"
	}
	return g.Name + ".txt"
}

// Read reads the manifest at path.
func Read(path string) ([]Golden, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("goldens: %w", err)
	}
	var gs []Golden
	if err := json.Unmarshal(data, &gs); err != nil {
		return nil, fmt.Errorf("goldens: %s: %w", path, err)
	}
	for _, g := range gs {
		if g.Name == "" || len(g.Args) == 0 || g.Pins == "" {
			return nil, fmt.Errorf("goldens: %s: a golden needs a name, args and what it pins: %+v", path, g)
		}
		for _, c := range g.Covers {
			if _, err := filepath.Match(c, ""); err != nil {
				return nil, fmt.Errorf("goldens: %s: %s: covers %q: %w", path, g.Name, c, err)
			}
		}
	}
	return gs, nil
}

// Write writes the manifest to path.
func Write(path string, gs []Golden) error {
	data, err := json.MarshalIndent(gs, "", "  ")
	if err != nil {
		return fmt.Errorf("goldens: %w", err)
	}
	if err := os.WriteFile(path, append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("goldens: %w", err)
	}
	return nil
}

// FileSHA256 is the hex SHA-256 of the file at path.
func FileSHA256(path string) (string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("goldens: %w", err)
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:]), nil
}

// CoveredRuns are the run directories (relative to root, sorted) matching g's Covers.
func (g Golden) CoveredRuns(root string) ([]string, error) {
	var runs []string
	for _, c := range g.Covers {
		m, err := filepath.Glob(filepath.Join(root, c))
		if err != nil {
			return nil, fmt.Errorf("goldens: %s: %w", g.Name, err)
		}
		for _, p := range m {
			rel, err := filepath.Rel(root, p)
			if err != nil {
				return nil, fmt.Errorf("goldens: %w", err)
			}
			runs = append(runs, filepath.ToSlash(rel))
		}
	}
	return runs, nil
}
