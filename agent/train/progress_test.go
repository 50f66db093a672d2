package train

import (
	"bytes"
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/sparsepcl/sparsepcl/agent/config"
	"github.com/sparsepcl/sparsepcl/agent/progress"
	"github.com/sparsepcl/sparsepcl/agent/tensor"
	"github.com/sparsepcl/sparsepcl/envs/registry"
)

// fakeClock advances by step at every reading.
type fakeClock struct {
	t    time.Time
	step time.Duration
}

func (c *fakeClock) now() time.Time {
	c.t = c.t.Add(c.step)
	return c.t
}

// longFloat matches a number printed with more digits than a progress line should have.
var longFloat = regexp.MustCompile(`\d\.\d{4,}`)

// A real run piped: a start line, lines as the (fake) clock passes the interval, an end line, all
// rounded; in JSON every line parses.
func TestRunReportsProgress(t *testing.T) {
	cfg := smallCopyConfig(config.AlgoSparse, 0.05)
	cfg.BatchSize, cfg.Iters, cfg.EvalEvery, cfg.EvalEpisodes, cfg.StopAtThreshold = 8, 12, 3, 4, false
	for _, format := range []progress.Format{progress.Text, progress.JSON} {
		clock := &fakeClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), step: time.Second}
		var out bytes.Buffer
		_, err := Run(context.Background(), cfg, Options{Dir: t.TempDir(), Registry: registry.Default(), Engine: tensor.GonumEngine(), Logger: quietLogger(),
			Progress: progress.Options{W: &out, Format: format, Every: 5 * time.Second, Clock: clock.now}})
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
		t.Logf("format %d:\n%s", format, out.String())
		if len(lines) < 4 || len(lines) > 6 {
			t.Errorf("format %d: %d lines, want the start, 2 to 3 at the 5 s interval of 12 iterations of 1 s, the end", format, len(lines))
		}
		for i, l := range lines {
			if longFloat.MatchString(l) {
				t.Errorf("format %d: line %q has an unrounded number", format, l)
			}
			if format == progress.JSON {
				var m map[string]any
				if err := json.Unmarshal([]byte(l), &m); err != nil {
					t.Errorf("line %q: %v", l, err)
				}
				continue
			}
			if !strings.HasPrefix(l, "iter ") || (i == 0 && !strings.HasSuffix(l, "started")) || (i == len(lines)-1 && !strings.Contains(l, "iter 12/12") && !strings.Contains(l, "done in")) {
				t.Errorf("line %d %q", i, l)
			}
		}
	}
}
