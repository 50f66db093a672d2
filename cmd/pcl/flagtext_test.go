package main

import (
	"errors"
	"fmt"
	"testing"

	"github.com/sparsepcl/sparsepcl/agent/config"
	"github.com/sparsepcl/sparsepcl/agent/memory"
)

// TestFlagText checks that the library's field errors are shown with the flags of their fields,
// through wrapping and errors.Join, and that other errors pass unchanged.
func TestFlagText(t *testing.T) {
	tsallis := config.Default()
	tsallis.Algo, tsallis.TsallisQ, tsallis.LearningRate = config.AlgoTsallis, 1, 0
	cases := []struct {
		name string
		err  error
		want string
	}{
		{"plain", errors.New("no checkpoint"), "no checkpoint"},
		{"joined", tsallis.Validate(),
			"--tsallis-q = 1: must be > 1 (q = 1 is soft PCL: use --algo soft)\n--learning-rate = 0: must be > 0"},
		{"wrapped", fmt.Errorf("control: %w", &config.FieldError{Field: "grid", Value: 0, Reason: "needs a Box"}),
			"control: --grid = 0: needs a Box"},
		{"related", &config.FieldError{Field: "replay_batch_size", Value: -1, Reason: "must be >= 0 (0 means %s)", Related: []string{"batch_size"}},
			"--replay-batch-size = -1: must be >= 0 (0 means --batch-size)"},
		{"memory", fmt.Errorf("start: %w", &memory.LimitError{Subject: memory.Subject{Env: "Copy-v0", Field: "base", Size: 9, Actions: 36},
			Estimate: memory.Estimate{Parts: []memory.Part{{What: "the batch", Detail: "4 × 9", Bytes: 2048, Lower: []string{"batch_size", "max_steps", "base"}}}},
			Limit:    memory.Limit{Bytes: 1024, From: "--max-memory 1KiB"}}),
			"start: Copy-v0 at --base 9 (36 actions) needs about 2.0 KiB, mostly the batch (4 × 9: 2.0 KiB), above the limit of 1.0 KiB (--max-memory 1KiB); " +
				"lower --batch-size, --max-steps or --base, or raise --max-memory (or turn it off)"},
		{"no flag", &config.FieldError{Field: "no_threshold", Value: true, Reason: "excludes %s", Related: []string{"reward_threshold"}},
			"no_threshold = true: excludes --reward-threshold"},
	}
	for _, tc := range cases {
		if got := flagText(tc.err); got != tc.want {
			t.Errorf("%s: flagText = %q, want %q", tc.name, got, tc.want)
		}
		if got := (usageError{tc.err}).Error(); got != tc.want {
			t.Errorf("%s: usageError = %q, want %q", tc.name, got, tc.want)
		}
	}
}

// flagName names a config field by its flag (the collapse warning's levers among them), and keeps a
// field without a flag as it is.
func TestFlagName(t *testing.T) {
	for field, want := range map[string]string{
		"alpha":         "--alpha",
		"alpha_auto":    "--alpha-auto",
		"learning_rate": "--learning-rate",
		"batch_size":    "--batch-size",
		memory.MaxField: "--max-memory",
		"no_such_field": "no_such_field",
	} {
		if got := flagName(field); got != want {
			t.Errorf("flagName(%q) = %q, want %q", field, got, want)
		}
	}
}
