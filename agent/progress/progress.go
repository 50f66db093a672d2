// Package progress reports a training run's progress on a writer (a live line rewritten in place,
// or plain or JSON lines at a steady interval of time) and rounds the numbers of its log lines.
package progress

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math"
	"strconv"
	"strings"
	"time"
)

// Format is how a run reports its progress.
type Format int

const (
	// Live rewrites one line in place (\r) as iterations complete: for a terminal.
	Live Format = iota
	// Text prints a plain line at the start, every Options.Every, and at the end: for a pipe or a
	// log file, which a line per iteration would flood.
	Text
	// JSON prints the lines of Text as JSON objects, one per line.
	JSON
)

// DefaultEvery is the interval of Text and JSON lines.
const DefaultEvery = 10 * time.Second

// Options say where and how a run reports its progress.
type Options struct {
	W      io.Writer // nil: no report
	Format Format
	Every  time.Duration    // the interval of Text and JSON lines (0: DefaultEvery)
	Clock  func() time.Time // nil: time.Now (the tests drive a fake clock)
}

// Point is a run's state after an iteration, as the progress line shows it.
type Point struct {
	Done       int     // iterations completed
	Reward     float64 // the last iteration's mean sampled reward (NaN: none yet)
	Greedy     float64 // the last greedy evaluation's mean reward (NaN: none yet)
	Curriculum int     // the training curriculum's length (0: none)
	EnvSteps   int64   // env steps so far (shown for long-episode runs)
}

// Reporter reports one run's progress on a writer: a live line, or plain or JSON lines at a steady
// interval of time. All methods are no-ops on a nil *Reporter (no writer).
type Reporter struct {
	w      io.Writer
	format Format
	every  time.Duration
	now    func() time.Time
	steps  bool // long-episode run: env steps shown, "return" for reward
	total  int  // iterations planned
	first  int  // iterations done when this process started
	start  time.Time
	next   time.Time // when the next text line is due
	open   bool      // a live line is on screen, unterminated
	err    error     // the first write error
}

// New returns the reporter of opts for a run of total iterations starting at first (steps: a
// long-episode run, whose env steps are shown and whose reward is a return), or nil without a
// writer.
func New(opts Options, first, total int, steps bool) *Reporter {
	if opts.W == nil {
		return nil
	}
	now := opts.Clock
	if now == nil {
		now = time.Now
	}
	every := opts.Every
	if every <= 0 {
		every = DefaultEvery
	}
	p := &Reporter{w: opts.W, format: opts.Format, every: every, now: now, steps: steps, total: total, first: first}
	p.start = now()
	p.next = p.start.Add(every)
	return p
}

// Begin reports the start (text and JSON only: the live line appears with the first iteration).
func (p *Reporter) Begin(pt Point) {
	if p == nil || p.format == Live {
		return
	}
	p.emit("start", pt, p.start, false)
}

// Update reports an iteration: the live line is redrawn, a text or JSON line is printed when the
// interval has passed.
func (p *Reporter) Update(pt Point) {
	if p == nil {
		return
	}
	t := p.now()
	if p.format == Live {
		p.write("\r" + p.text(pt, t, "") + "\x1b[K")
		p.open = true
		return
	}
	if t.Before(p.next) {
		return
	}
	// The next line is due one interval after this one was: a slow iteration delays a line, it
	// does not cause a burst of them.
	p.next = t.Add(p.every)
	p.emit("progress", pt, t, false)
}

// End reports the end of the run (interrupted: stopped by a cancel) and returns the first error
// writing or flushing the output.
func (p *Reporter) End(pt Point, interrupted bool) error {
	if p == nil {
		return nil
	}
	t := p.now()
	if p.format == Live {
		p.write("\r" + p.text(pt, t, "") + "\x1b[K\n")
		p.open = false
	} else {
		p.emit("end", pt, t, interrupted)
	}
	if f, ok := p.w.(interface{ Flush() error }); ok && p.err == nil {
		p.err = f.Flush()
	}
	return p.err
}

// BreakLine ends the live line, so that a log line that follows starts on a line of its own.
func (p *Reporter) BreakLine() {
	if p != nil && p.open {
		p.write("\n")
		p.open = false
	}
}

func (p *Reporter) write(s string) {
	if _, err := io.WriteString(p.w, s); err != nil && p.err == nil {
		p.err = err
	}
}

// rate returns the seconds per iteration of this process so far (NaN before the first).
func (p *Reporter) rate(pt Point, t time.Time) float64 {
	n := pt.Done - p.first
	if n <= 0 {
		return math.NaN()
	}
	return t.Sub(p.start).Seconds() / float64(n)
}

// eta is the time the remaining iterations take at the rate so far (negative: unknown).
func (p *Reporter) eta(pt Point, t time.Time) time.Duration {
	spi := p.rate(pt, t)
	if math.IsNaN(spi) {
		return -1
	}
	return time.Duration(float64(max(p.total-pt.Done, 0)) * spi * float64(time.Second))
}

// text is the plain progress line, e.g.
// "iter 120/300  2.41 it/s  reward 3.52  greedy 4.10  curriculum 6  eta 1m14s"; tail replaces the eta.
func (p *Reporter) text(pt Point, t time.Time, tail string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "iter %d/%d", pt.Done, p.total)
	if spi := p.rate(pt, t); !math.IsNaN(spi) {
		if spi < 1 {
			fmt.Fprintf(&b, "  %s it/s", sig3(1/spi))
		} else {
			fmt.Fprintf(&b, "  %s s/it", sig3(spi))
		}
	}
	name := "reward"
	if p.steps {
		name = "return"
		fmt.Fprintf(&b, "  steps %d", pt.EnvSteps)
	}
	if !math.IsNaN(pt.Reward) {
		fmt.Fprintf(&b, "  %s %s", name, Fixed2(pt.Reward))
	}
	if !math.IsNaN(pt.Greedy) {
		fmt.Fprintf(&b, "  greedy %s", Fixed2(pt.Greedy))
	}
	if pt.Curriculum > 0 {
		fmt.Fprintf(&b, "  curriculum %d", pt.Curriculum)
	}
	switch {
	case tail != "":
		b.WriteString("  " + tail)
	case pt.Done < p.total:
		if eta := p.eta(pt, t); eta >= 0 {
			fmt.Fprintf(&b, "  eta %s", eta.Round(time.Second))
		}
	}
	return b.String()
}

// jsonLine is a JSON progress line: the fields of the text line, numbers rounded, absent ones
// left out; "msg" is "progress" as the log lines' is their message.
type jsonLine struct {
	Time        string   `json:"time"`
	Level       string   `json:"level"`
	Msg         string   `json:"msg"`
	Event       string   `json:"event"` // "start", "progress" or "end"
	Iteration   int      `json:"iteration"`
	Iters       int      `json:"iters"`
	SecPerIt    *float64 `json:"s_per_it,omitempty"`
	ItPerSec    *float64 `json:"it_per_s,omitempty"`
	EnvSteps    *int64   `json:"env_steps,omitempty"`
	Reward      *float64 `json:"reward,omitempty"`
	Greedy      *float64 `json:"greedy,omitempty"`
	Curriculum  int      `json:"curriculum,omitempty"`
	ETASec      *float64 `json:"eta_s,omitempty"`
	ElapsedSec  float64  `json:"elapsed_s"`
	Interrupted bool     `json:"interrupted,omitempty"`
}

// emit prints a text or JSON line of event.
func (p *Reporter) emit(event string, pt Point, t time.Time, interrupted bool) {
	elapsed := t.Sub(p.start)
	if p.format != JSON {
		tail := ""
		switch {
		case event == "start" && p.first > 0:
			tail = "resumed"
		case event == "start":
			tail = "started"
		case event == "end" && interrupted:
			tail = "interrupted after " + elapsed.Round(time.Second).String()
		case event == "end":
			tail = "done in " + elapsed.Round(time.Second).String()
		}
		p.write(p.text(pt, t, tail) + "\n")
		return
	}
	j := jsonLine{Time: t.Format(time.RFC3339Nano), Level: "INFO", Msg: "progress", Event: event, Iteration: pt.Done, Iters: p.total,
		Curriculum: pt.Curriculum, ElapsedSec: roundTo(elapsed.Seconds(), 1), Interrupted: interrupted}
	if spi := p.rate(pt, t); !math.IsNaN(spi) {
		a, b := round(spi), round(1/spi)
		j.SecPerIt, j.ItPerSec = &a, &b
	}
	if p.steps {
		j.EnvSteps = &pt.EnvSteps
	}
	j.Reward, j.Greedy = finite2(pt.Reward), finite2(pt.Greedy)
	if eta := p.eta(pt, t); eta >= 0 && event != "end" {
		s := math.Round(eta.Seconds())
		j.ETASec = &s
	}
	b, err := json.Marshal(j)
	if err != nil { // no NaN gets here; a failure would be a bug, reported like a write error
		if p.err == nil {
			p.err = err
		}
		return
	}
	p.write(string(b) + "\n")
}

// finite2 is x rounded to 2 decimals, or nil when NaN or infinite.
func finite2(x float64) *float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return nil
	}
	r := roundTo(x, 2)
	return &r
}

// roundTo rounds x to d decimals, to the float64 that prints as the short decimal.
func roundTo(x float64, d int) float64 {
	v, err := strconv.ParseFloat(strconv.FormatFloat(x, 'f', d, 64), 64)
	if err != nil {
		return x
	}
	return v
}

// round keeps 3 significant digits (for log lines and rates), as the float64 that prints as
// that short decimal (0.0552, not 0.055208710300000005).
func round(x float64) float64 {
	if x == 0 || math.IsNaN(x) || math.IsInf(x, 0) {
		return x
	}
	v, err := strconv.ParseFloat(strconv.FormatFloat(x, 'g', 3, 64), 64)
	if err != nil {
		return x
	}
	return v
}

// sig3 prints x with 3 significant digits and no exponent for ordinary rates: "2.41", "12.3", "0.041".
func sig3(x float64) string { return strconv.FormatFloat(round(x), 'f', -1, 64) }

// Fixed2 prints a reward with 2 decimals.
func Fixed2(x float64) string { return strconv.FormatFloat(x, 'f', 2, 64) }

// LogNums returns slog key-value pairs with every float64 value rounded to 3 significant digits
// and NaN or infinite ones left out (a JSON log cannot hold them; "none yet" is their meaning).
func LogNums(kv ...any) []any {
	out := make([]any, 0, len(kv))
	for i := 0; i+1 < len(kv); i += 2 {
		if x, ok := kv[i+1].(float64); ok {
			if math.IsNaN(x) || math.IsInf(x, 0) {
				continue
			}
			kv[i+1] = round(x)
		}
		out = append(out, kv[i], kv[i+1])
	}
	return out
}

// lineBreaker is a log handler that first ends the live progress line, so that log lines and the
// progress line sharing a terminal do not run into each other.
type lineBreaker struct {
	slog.Handler
	p *Reporter
}

func (h lineBreaker) Handle(ctx context.Context, r slog.Record) error {
	h.p.BreakLine()
	return h.Handler.Handle(ctx, r)
}

func (h lineBreaker) WithAttrs(as []slog.Attr) slog.Handler {
	return lineBreaker{h.Handler.WithAttrs(as), h.p}
}

func (h lineBreaker) WithGroup(name string) slog.Handler {
	return lineBreaker{h.Handler.WithGroup(name), h.p}
}

// Logger returns log, wrapped to break a live progress line before each record.
func (p *Reporter) Logger(log *slog.Logger) *slog.Logger {
	if p == nil || p.format != Live {
		return log
	}
	return slog.New(lineBreaker{log.Handler(), p})
}

// IsLive reports whether p redraws a live line (false for nil: no report).
func (p *Reporter) IsLive() bool { return p != nil && p.format == Live }
