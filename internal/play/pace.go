package play

import (
	"context"
	"io"
	"strings"
	"time"
)

// Pacer paces the steps of a replay on a terminal: one every delay, or, with no delay, one per
// line read (Enter) until the input ends, and then without pausing, so a piped replay prints
// whole episodes.
type Pacer struct {
	lines       <-chan string
	delay       time.Duration
	interactive bool
}

// NewPacer paces by delay, or by the lines of in when delay is 0.
func NewPacer(ctx context.Context, in io.Reader, delay time.Duration) *Pacer {
	return &Pacer{lines: Lines(ctx, in), delay: delay, interactive: delay == 0}
}

// Wait returns when the next step is due: true to take it, false when the viewer typed q.
func (p *Pacer) Wait(ctx context.Context) (bool, error) {
	switch {
	case p.delay > 0:
		select {
		case <-ctx.Done():
			return false, ctx.Err()
		case <-time.After(p.delay):
			return true, nil
		}
	case !p.interactive:
		return true, ctx.Err()
	}
	select {
	case <-ctx.Done():
		return false, ctx.Err()
	case l, ok := <-p.lines:
		if !ok {
			p.interactive = false // the input ended: play on without pausing
			return true, nil
		}
		return strings.TrimSpace(l) != "q", nil
	}
}
