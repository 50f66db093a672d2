package memory

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sparsepcl/sparsepcl/agent/config"
	"github.com/sparsepcl/sparsepcl/agent/model/lstm"
)

// copySpec is the spec of Copy at base: observations 0..base, actions move x write x symbol.
func copySpec(base int) lstm.Spec {
	return lstm.Spec{ObsVocab: base + 1, ActionComponents: []int{2, 2, base}}
}

// The estimate follows the config: the paper's Copy at |A| = 400,000 is dominated by the batch's
// per-action arrays and far above a 24 GiB machine, the default |A| = 20 is small, the
// long-episode path counts the grid's actions and the step replay, the parts scale with the
// flags that set them, and absurd sizes saturate instead of overflowing.
func TestEstimateMemory(t *testing.T) {
	def := config.Default()
	big := def
	big.Base = 100000
	halfBatch := big
	halfBatch.BatchSize = 200
	cheetah := def
	cheetah.Env, cheetah.Net, cheetah.Grid = "HalfCheetah-v5", config.NetMLP, 5
	absurd := big
	absurd.Base, absurd.BatchSize, absurd.MaxSteps = 1<<30, 1<<30, 1<<30
	cases := []struct {
		name     string
		est      Estimate
		min, max int64  // bounds on the total
		largest  string // What of the dominant part
		detail   string // in its Detail
	}{
		{"Copy base 100000", EstimateEpisodes(big, copySpec(100000)), 400 << 30, 600 << 30,
			"the training batch's per-action arrays", "400 episodes × 201 steps × 400000 actions × 4 float32 arrays"},
		{"Copy base 100000, batch 200", EstimateEpisodes(halfBatch, copySpec(100000)), 200 << 30, 300 << 30,
			"the training batch's per-action arrays", "200 episodes × 201 steps"},
		{"Copy base 5 (the defaults)", EstimateEpisodes(def, copySpec(5)), 500 << 20, 2 << 30, "", ""},
		{"HalfCheetah grid 5", EstimateSteps(cheetah, 17, 15625), 500 << 20, 2 << 30,
			"the training batch's per-action arrays", "25 sub-episodes × 101 steps × 15625 actions"},
		{"absurd", EstimateEpisodes(absurd, copySpec(1<<30)), math.MaxInt64, math.MaxInt64, "", ""},
	}
	for _, tc := range cases {
		got := tc.est.Total()
		t.Logf("%s: %s, largest %s (%s)", tc.name, FormatBytes(got), tc.est.Largest().What, tc.est.Largest().Detail)
		if got < tc.min || got > tc.max {
			t.Errorf("%s: %s (%d bytes), want %s to %s", tc.name, FormatBytes(got), got, FormatBytes(tc.min), FormatBytes(tc.max))
		}
		if l := tc.est.Largest(); tc.largest != "" && (l.What != tc.largest || !strings.Contains(l.Detail, tc.detail)) {
			t.Errorf("%s: largest part %q (%s), want %q with %q", tc.name, l.What, l.Detail, tc.largest, tc.detail)
		}
		for _, p := range tc.est.Parts {
			if p.Bytes < 0 || len(p.Lower) == 0 || p.What == "" {
				t.Errorf("%s: part %+v: negative, or without a name or the flags that lower it", tc.name, p)
			}
		}
	}
}

// The refusal message gives the estimate, what dominates and the limit with its origin, and
// names the flags; errors.Is finds ErrTooLarge.
func TestMemoryErrorMessage(t *testing.T) {
	cfg := config.Default()
	cfg.Base = 100000
	spec := copySpec(100000)
	limit := Limit{Bytes: 19 << 30, From: "80% of this machine's 24 GiB"}
	err := Check(limit, SubjectOf(cfg, spec.NumActions()), EstimateEpisodes(cfg, spec))
	if !errors.Is(err, ErrTooLarge) {
		t.Fatalf("error %v, want ErrTooLarge", err)
	}
	for _, tc := range []struct {
		msg  string
		want []string
	}{
		{err.Error(), []string{"Copy-v0 at base 100000 (400000 actions) needs about ", " GiB, mostly the training batch's per-action arrays (400 episodes × 201 steps × 400000 actions",
			"above the limit of 19 GiB (80% of this machine's 24 GiB)", "lower batch_size, max_steps or base, or raise the memory limit (train.Options.MaxMemory)"}},
		{err.(*LimitError).Text(func(f string) string { return "<" + f + ">" }),
			[]string{"Copy-v0 at <base> 100000 (400000 actions)", "lower <batch_size>, <max_steps> or <base>, or raise <max_memory>"}},
	} {
		for _, want := range tc.want {
			if !strings.Contains(tc.msg, want) {
				t.Errorf("message %q lacks %q", tc.msg, want)
			}
		}
	}
	if err := Check(NoLimit(), Subject{Env: "x"}, EstimateEpisodes(cfg, spec)); err != nil {
		t.Errorf("no limit: %v", err)
	}
	if err := Check(Limit{Bytes: 1 << 40}, Subject{Env: "x"}, EstimateEpisodes(config.Default(), copySpec(5))); err != nil {
		t.Errorf("a small run under a large limit: %v", err)
	}
}

func TestParseMemoryLimitAndFormat(t *testing.T) {
	cases := []struct {
		in    string
		bytes int64 // -1: off; 0: an error
	}{
		{"32GiB", 32 << 30}, {"32G", 32 << 30}, {"1.5g", 3 << 29}, {"500MiB", 500 << 20}, {"2TiB", 2 << 40},
		{"4GB", 4e9}, {"1048576", 1 << 20}, {"0", -1}, {"off", -1}, {"OFF", -1},
		{"", 0}, {"abc", 0}, {"-3G", 0}, {"3 parsecs", 0}, {"1e30G", 0},
	}
	for _, tc := range cases {
		l, err := ParseLimit(tc.in)
		switch {
		case tc.bytes == 0 && err == nil:
			t.Errorf("%q: %+v, want an error", tc.in, l)
		case tc.bytes != 0 && (err != nil || l.Bytes != tc.bytes):
			t.Errorf("%q: %d bytes (%v), want %d", tc.in, l.Bytes, err, tc.bytes)
		}
	}
	for b, want := range map[int64]string{512: "512 B", 1536: "1.5 KiB", 61 << 30: "61 GiB", 3 << 29: "1.5 GiB", 500 << 20: "500 MiB"} {
		if got := FormatBytes(b); got != want {
			t.Errorf("FormatBytes(%d) = %q, want %q", b, got, want)
		}
	}
}

// The default limit is 80% of MemTotal, or of an assumed size named as such when the file cannot
// be read.
func TestMemoryLimitFromMeminfo(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "meminfo")
	if err := os.WriteFile(good, []byte("MemFree:  1000 kB\nMemTotal:       25165824 kB\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "bad")
	if err := os.WriteFile(bad, []byte("MemTotal: lots\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		path  string
		bytes int64
		from  string
	}{
		{good, 24 << 30 * 8 / 10, "80% of this machine's 24 GiB"},
		{bad, fallbackMemory * 8 / 10, "this machine's memory is unknown"},
		{filepath.Join(dir, "missing"), fallbackMemory * 8 / 10, "this machine's memory is unknown"},
	}
	for _, tc := range cases {
		l := limitFrom(tc.path)
		if l.Bytes != tc.bytes || !strings.Contains(l.From, tc.from) {
			t.Errorf("%s: %+v, want %d bytes from %q", tc.path, l, tc.bytes, tc.from)
		}
	}
	if l := DefaultLimit(); l.Bytes <= 0 {
		t.Errorf("default limit %+v", l)
	}
}
