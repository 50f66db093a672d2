package progress

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"math"
	"regexp"
	"strings"
	"testing"
	"time"
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

// drive reports 100 iterations of 0.41 s each with unrounded rewards, the first greedy evaluation
// at iteration 30, and returns the output.
func drive(t *testing.T, format Format) string {
	t.Helper()
	clock := &fakeClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	var out bytes.Buffer
	p := New(Options{W: &out, Format: format, Every: 10 * time.Second, Clock: clock.now}, 0, 100, false)
	pt := Point{Reward: math.NaN(), Greedy: math.NaN(), Curriculum: 2}
	p.Begin(pt)
	clock.step = 410 * time.Millisecond
	for i := 1; i <= 100; i++ {
		pt = Point{Done: i, Reward: 0.055208710300000005 * float64(i), Greedy: math.NaN(), Curriculum: 2 + i/40}
		if i >= 30 {
			pt.Greedy = 31.0123456789
		}
		p.Update(pt)
	}
	clock.step = 0
	if err := p.End(pt, false); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

// Piped, progress is a plain line at the start, then one per interval of (fake) time, whatever
// the number of iterations in it, and one at the end, with rounded numbers and an ETA.
func TestTextLinesAtTheInterval(t *testing.T) {
	lines := strings.Split(strings.TrimSuffix(drive(t, Text), "\n"), "\n")
	want := []string{
		"iter 0/100  curriculum 2  started",
		"iter 25/100  2.44 it/s  reward 1.38  curriculum 2  eta 31s",
		"iter 50/100  2.44 it/s  reward 2.76  greedy 31.01  curriculum 3  eta 21s",
		"iter 75/100  2.44 it/s  reward 4.14  greedy 31.01  curriculum 3  eta 10s",
		"iter 100/100  2.44 it/s  reward 5.52  greedy 31.01  curriculum 4",
		"iter 100/100  2.44 it/s  reward 5.52  greedy 31.01  curriculum 4  done in 41s",
	}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Errorf("lines:\n%s\nwant:\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
	for _, l := range lines {
		if longFloat.MatchString(l) || strings.Contains(l, "\r") {
			t.Errorf("line %q has an unrounded number or a carriage return", l)
		}
	}
}

// In JSON every line is an object with numeric fields, absent ones left out.
func TestJSONLinesParse(t *testing.T) {
	out := drive(t, JSON)
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 6 {
		t.Fatalf("%d lines, want 6 (start, 4 at the interval, end):\n%s", len(lines), out)
	}
	var events []string
	for i, l := range lines {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("line %d %q: %v", i, l, err)
		}
		events = append(events, m["event"].(string))
		if m["msg"] != "progress" || m["iters"] != 100.0 {
			t.Errorf("line %d: %v", i, m)
		}
		if longFloat.MatchString(l) {
			t.Errorf("line %q has an unrounded number", l)
		}
		if i == 2 {
			for k, want := range map[string]float64{"iteration": 50, "it_per_s": 2.44, "s_per_it": 0.41, "reward": 2.76, "greedy": 31.01, "curriculum": 3, "eta_s": 21, "elapsed_s": 20.5} {
				if m[k] != want {
					t.Errorf("line %d: %s = %v, want %v", i, k, m[k], want)
				}
			}
		}
		if _, ok := m["greedy"]; i == 1 && ok {
			t.Errorf("line %d has a greedy value before any evaluation: %s", i, l)
		}
	}
	if strings.Join(events, ",") != "start,progress,progress,progress,progress,end" {
		t.Errorf("events %v", events)
	}
}

// On a terminal the line is rewritten in place and ended once; a log line breaks it first.
func TestLiveLine(t *testing.T) {
	out := drive(t, Live)
	if n := strings.Count(out, "\r"); n != 101 {
		t.Errorf("%d redraws, want 101 (one per iteration and the last)", n)
	}
	if strings.Count(out, "\n") != 1 || !strings.HasSuffix(out, "\riter 100/100  2.44 it/s  reward 5.52  greedy 31.01  curriculum 4\x1b[K\n") {
		t.Errorf("output does not end with the final line, ended once: %q", out[max(0, len(out)-200):])
	}
	var buf bytes.Buffer
	p := New(Options{W: &buf}, 0, 10, false)
	p.Update(Point{Done: 1, Reward: 1, Greedy: math.NaN()})
	log := p.Logger(slog.New(slog.NewTextHandler(io.Discard, nil)))
	log.Info("hello")
	log.Info("again")
	if got := buf.String(); strings.Count(got, "\n") != 1 || !strings.HasSuffix(got, "\n") {
		t.Errorf("a log line must end the live line once: %q", got)
	}
}

// Log values are rounded, and NaN ("none yet") is left out, which a JSON log could not hold.
func TestLogNums(t *testing.T) {
	got := LogNums("a", 0.055208710300000005, "b", math.NaN(), "c", "text", "d", 12345.678, "e", 7)
	want := []any{"a", 0.0552, "c", "text", "d", 12300.0, "e", 7}
	if len(got) != len(want) {
		t.Fatalf("%v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("%v, want %v", got, want)
			break
		}
	}
}
