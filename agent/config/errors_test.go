package config

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// TestFieldErrorText checks both renderings: by JSON name (Error) and by a caller's names.
func TestFieldErrorText(t *testing.T) {
	flagOf := func(f string) string { return "--" + strings.ReplaceAll(f, "_", "-") }
	cases := []struct {
		err         FieldError
		error, text string
	}{
		{FieldError{Field: "alpha", Value: 0.0, Reason: "must be > 0"},
			"config: alpha = 0: must be > 0", "--alpha = 0: must be > 0"},
		{FieldError{Field: "tsallis_q", Value: 1.0, Reason: "must be > 1 (use %s soft)", Related: []string{"algo"}},
			"config: tsallis_q = 1: must be > 1 (use algo soft)", "--tsallis-q = 1: must be > 1 (use --algo soft)"},
		{FieldError{Field: "alpha_decay", Value: 0.5, Reason: "needs %s", Related: []string{"alpha_start"}},
			"config: alpha_decay = 0.5: needs alpha_start", "--alpha-decay = 0.5: needs --alpha-start"},
	}
	for _, tc := range cases {
		if got := tc.err.Error(); got != tc.error {
			t.Errorf("Error() = %q, want %q", got, tc.error)
		}
		if got := tc.err.Text(flagOf); got != tc.text {
			t.Errorf("Text = %q, want %q", got, tc.text)
		}
	}
}

// TestValidateFieldErrors checks that Validate's errors are FieldErrors naming fields by JSON
// name, their messages naming no flag.
func TestValidateFieldErrors(t *testing.T) {
	cases := []struct {
		mut     func(*Config)
		field   string
		related []string
	}{
		{func(c *Config) { c.Algo, c.TsallisQ = AlgoTsallis, 1 }, "tsallis_q", []string{"algo"}},
		{func(c *Config) { c.StopAtThreshold, c.NoThreshold = true, true }, "stop_at_threshold", []string{"reward_threshold"}},
		{func(c *Config) { c.AlphaDecay = 0.5 }, "alpha_decay", []string{"alpha_start"}},
		{func(c *Config) { c.ReplayBatchSize = -1 }, "replay_batch_size", []string{"batch_size"}},
		{func(c *Config) { c.LearningRate = 0 }, "learning_rate", nil},
	}
	for _, tc := range cases {
		c := Default()
		tc.mut(&c)
		err := c.Validate()
		var fe *FieldError
		if !errors.As(err, &fe) {
			t.Fatalf("%s: %v is not a *FieldError", tc.field, err)
		}
		if fe.Field != tc.field || strings.Join(fe.Related, ",") != strings.Join(tc.related, ",") {
			t.Errorf("got field %s related %v, want %s %v", fe.Field, fe.Related, tc.field, tc.related)
		}
		if strings.Contains(err.Error(), "--") {
			t.Errorf("%s: library error names a flag: %v", tc.field, err)
		}
	}
}

// TestFieldFlags checks the JSON name -> flag map: every flag once, and the names that differ.
func TestFieldFlags(t *testing.T) {
	m := FieldFlags()
	if len(m) != len(FlagNames())-len(FlagAliases()) {
		t.Errorf("%d fields with a flag, %d flags and %d older spellings", len(m), len(FlagNames()), len(FlagAliases()))
	}
	for field, flag := range map[string]string{
		"learning_rate": "learning-rate", "batch_size": "batch-size", "replay_batch_size": "replay-batch-size",
		"reward_threshold": "reward-threshold", "tsallis_q": "tsallis-q", "alpha": "alpha", "max_loss": "max-loss",
	} {
		if m[field] != flag {
			t.Errorf("FieldFlags()[%q] = %q, want %q", field, m[field], flag)
		}
	}
	if f, ok := m["no_threshold"]; ok {
		t.Errorf("no_threshold has flag %q; it has none", f)
	}
}

// TestRenamed checks that every FieldError of a wrapped, joined error is renamed, and the rest of
// the message kept.
func TestRenamed(t *testing.T) {
	c := Default()
	c.Gamma, c.ReplayBatchSize = 2, -1
	err := fmt.Errorf("run: %w", c.Validate())
	upper := func(f string) string { return strings.ToUpper(f) }
	want := "run: GAMMA = 2: must be in (0, 1]\nREPLAY_BATCH_SIZE = -1: must be >= 0 (0 means BATCH_SIZE)"
	if got := Renamed(err, upper); got != want {
		t.Errorf("Renamed = %q, want %q", got, want)
	}
	if got := Renamed(errors.New("plain"), upper); got != "plain" {
		t.Errorf("Renamed(plain) = %q", got)
	}
}
