package weight

import (
	"fmt"
	"math"
	"strings"
	"testing"
)

func TestDecayValues(t *testing.T) {
	d, err := NewDecay(0.1, 0.1, 0.001)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		it   int
		want float64
	}{
		{0, 0.1}, {50, 0.1 * math.Sqrt(0.1)}, {100, 0.01}, {200, 0.001}, {250, 0.001}, {10000, 0.001},
	} {
		if got := d.Alpha(tc.it, Stats{}); math.Abs(got-tc.want) > 1e-15 {
			t.Errorf("iteration %d: alpha %v, want %v", tc.it, got, tc.want)
		}
	}
	for _, bad := range []struct{ start, rate, floor float64 }{
		{0.01, 0.5, 0.1}, {0.1, 0, 0.01}, {0.1, 1.5, 0.01}, {0.1, 0.5, 0}, {math.NaN(), 0.5, 0.1},
	} {
		if _, err := NewDecay(bad.start, bad.rate, bad.floor); err == nil {
			t.Errorf("NewDecay(%v, %v, %v): no error", bad.start, bad.rate, bad.floor)
		}
	}
	if got := Fixed(0.3).Alpha(123, Stats{MaxProb: 1}); got != 0.3 {
		t.Errorf("Fixed: %v", got)
	}
}

func TestAutoMovesTowardTarget(t *testing.T) {
	o := DefaultAuto(0.1)
	o.UpRate = 4
	a, err := NewAuto(o)
	if err != nil {
		t.Fatal(err)
	}
	step := func(it int, mp float64) float64 {
		before := math.Log(a.Current())
		return math.Log(a.Alpha(it, Stats{MaxProb: mp})) - before
	}
	// Before the policy first reaches the target, a spread policy leaves alpha where it is.
	for it := range 10 {
		if d := step(it, 0.2); d != 0 {
			t.Fatalf("iteration %d, max-prob 0.2 below the target %v before reaching it: log alpha moved by %v", it, a.Target(it), d)
		}
	}
	// More deterministic than the target: alpha rises, UpRate times faster.
	if d, want := step(10, 0.99), o.UpRate*o.Rate*(0.99-a.Target(10)); !(d > 0) || math.Abs(d-want) > 1e-12 {
		t.Fatalf("max-prob 0.99: log alpha moved by %v, want %v", d, want)
	}
	// Once reached, a more spread policy lowers it at Rate.
	for it := 11; it < 20; it++ {
		if d, want := step(it, 0.05), o.Rate*(0.05-a.Target(it)); !(d < 0) || math.Abs(d-want) > 1e-12 {
			t.Fatalf("iteration %d, max-prob 0.05: log alpha moved by %v, want %v", it, d, want)
		}
	}
	before := a.Current()
	if got := a.Alpha(20, Stats{MaxProb: math.NaN()}); got != before {
		t.Errorf("unmeasured batch: alpha moved to %v from %v", got, before)
	}
	if got := a.Alpha(21, Stats{MaxProb: a.Target(21)}); math.Abs(got-before) > 1e-15 {
		t.Errorf("on target: alpha moved to %v from %v", got, before)
	}
}

func TestAutoBoundsAndTarget(t *testing.T) {
	o := DefaultAuto(0.1)
	o.Rate = 5
	a, err := NewAuto(o)
	if err != nil {
		t.Fatal(err)
	}
	for it := range 20 {
		a.Alpha(it, Stats{MaxProb: 1})
	}
	if got := a.Current(); math.Abs(got-o.Max) > 1e-9 {
		t.Errorf("alpha after pushing up: %v, want the bound %v", got, o.Max)
	}
	for it := range 40 {
		a.Alpha(it, Stats{MaxProb: 0})
	}
	if got := a.Current(); math.Abs(got-o.Min) > 1e-12 {
		t.Errorf("alpha after pushing down: %v, want the bound %v", got, o.Min)
	}
	// The target rises from TargetStart toward TargetEnd, the gap shrinking by TargetRate per 100.
	if got := a.Target(0); got != o.TargetStart {
		t.Errorf("target at 0: %v", got)
	}
	if got, want := a.Target(100), o.TargetEnd-(o.TargetEnd-o.TargetStart)*o.TargetRate; math.Abs(got-want) > 1e-15 {
		t.Errorf("target at 100: %v, want %v", got, want)
	}
	if got := a.Target(1_000_000); math.Abs(got-o.TargetEnd) > 1e-12 {
		t.Errorf("target late: %v, want %v", got, o.TargetEnd)
	}
	for _, bad := range []func(*AutoOptions){
		func(o *AutoOptions) { o.Start = 20 }, func(o *AutoOptions) { o.TargetEnd = 1 },
		func(o *AutoOptions) { o.TargetRate = 0 }, func(o *AutoOptions) { o.Rate = math.Inf(1) },
		func(o *AutoOptions) { o.Min = 0 }, func(o *AutoOptions) { o.UpRate = 0.5 },
	} {
		o := DefaultAuto(0.1)
		bad(&o)
		if _, err := NewAuto(o); err == nil {
			t.Errorf("NewAuto(%+v): no error", o)
		}
	}
	if err := a.SetState(AutoState{LogAlpha: math.Log(0.02), Reached: true}); err != nil || a.State() != (AutoState{math.Log(0.02), true}) {
		t.Errorf("SetState: %v, state %+v", err, a.State())
	}
	if err := a.SetState(AutoState{LogAlpha: math.Log(100)}); err == nil {
		t.Error("SetState above the bound: no error")
	}
}

// The step uses dJ/dlog α; central differences of J agree with it.
func TestAutoGradientFiniteDifference(t *testing.T) {
	a, _ := NewAuto(DefaultAuto(0.1))
	for _, s := range []Stats{{MaxProb: 0.2}, {MaxProb: 0.7}, {MaxProb: 1}} {
		for _, it := range []int{0, 150, 2000} {
			x, h := math.Log(0.05), 1e-6
			fd := (a.Objective(x+h, it, s) - a.Objective(x-h, it, s)) / (2 * h)
			if g := a.Gradient(it, s); math.Abs(fd-g) > 1e-8 {
				t.Errorf("max-prob %v, iteration %d: gradient %v, finite difference %v", s.MaxProb, it, g, fd)
			}
		}
	}
}

func TestCollapseCheck(t *testing.T) {
	const budget, window = 1000, 100
	collapsedFrom := func(onset int, ret func(it int) float64) func(it int) Point {
		return func(it int) Point {
			p := Point{Iteration: it, Support: 12, MaxProb: 0.3, Return: ret(it)}
			if it >= onset {
				p.Support, p.MaxProb = 1, 1
			}
			if it%3 == 1 {
				p.Return = math.NaN() // rows without a finished episode
			}
			return p
		}
	}
	flat := func(it int) float64 { return 35 + 0.001*float64(it%7) }
	// learnedThen climbs from -400 to 500 by iteration 90, holds it, and falls to after from 700 on.
	learnedThen := func(after float64) func(it int) float64 {
		return func(it int) float64 {
			if it >= 700 {
				return after + 0.001*float64(it%7)
			}
			return min(-400+10*float64(it), 500)
		}
	}
	for _, tc := range []struct {
		name   string
		point  func(it int) Point
		thresh float64
		fires  int // iteration at which the warning comes, -1: never
	}{
		{"collapsed early, flat return", collapsedFrom(80, flat), math.NaN(), 169},
		{"collapsed, a spread state now and then", func(it int) Point {
			p := collapsedFrom(80, flat)(it)
			if it%25 == 0 {
				p.Support, p.MaxProb = 3, 0.4
			}
			return p
		}, math.NaN(), 172},
		{"healthy: spread policy", collapsedFrom(budget, flat), math.NaN(), -1},
		{"collapsed, still improving", collapsedFrom(80, func(it int) float64 { return float64(it) }), math.NaN(), -1},
		{"collapsed late, after learning", collapsedFrom(600, func(it int) float64 { return min(-400+10*float64(it), 500) }), math.NaN(), -1},
		{"collapsed late, never learned", collapsedFrom(600, flat), math.NaN(), 689},
		{"collapsed late, never passed 0", collapsedFrom(600, func(it int) float64 { return min(-400+float64(it)/2, -100) }), math.NaN(), 690},
		{"collapsed at a solved level", collapsedFrom(80, flat), 30, -1},
		{"collapsed after learning: from -400 past 0", collapsedFrom(80, func(it int) float64 {
			return min(-400+10*float64(it), 50)
		}), math.NaN(), -1},
		{"collapsed before learning: from -400 to -50", collapsedFrom(80, func(it int) float64 {
			return min(-400+10*float64(it), -50)
		}), math.NaN(), 169},
		{"collapsed late, having lost what it learned", collapsedFrom(700, learnedThen(-100)), math.NaN(), 789},
		{"collapsed late, keeping most of what it learned", collapsedFrom(700, learnedThen(400)), math.NaN(), -1},
		{"collapsed after learning, a short dip", collapsedFrom(700, func(it int) float64 {
			if it >= 770 && it < 796 {
				return -100 // a quarter window: the last quarter does not improve, the second half holds
			}
			return learnedThen(500)(it)
		}), math.NaN(), -1},
		{"collapsed early, having lost what it learned", func(it int) Point {
			p := collapsedFrom(200, learnedThen(-100))(it)
			if it >= 200 {
				p.Return = -100 + 0.001*float64(it%7)
			}
			return p
		}, math.NaN(), 289},
		{"one action in half the iterations only", func(it int) Point {
			p := collapsedFrom(0, flat)(it)
			if it%2 == 0 {
				p.Support, p.MaxProb = 3, 0.4
			}
			return p
		}, math.NaN(), -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := NewCollapseCheck(window, tc.thresh)
			if err != nil {
				t.Fatal(err)
			}
			got, n := -1, 0
			var w Collapse
			for it := range budget {
				if cw, ok := c.Observe(tc.point(it)); ok {
					n++
					if got < 0 {
						got, w = it, cw
					}
				}
			}
			if got != tc.fires || n > 1 {
				t.Fatalf("warned %d times, first at %d; want once at %d", n, got, tc.fires)
			}
			if got >= 0 {
				msg := w.String()
				onset := 0
				for !tc.point(onset).oneAction() {
					onset++
				}
				wants := []string{fmt.Sprintf("since iteration %d,", onset), "max-prob", "did not improve"}
				if strings.Contains(tc.name, "lost") {
					wants = append(wants, "having lost what it learned (a mean return of 500 up to iteration")
				} else if strings.Contains(msg, "lost") {
					t.Errorf("warning %q says the run lost what it learned", msg)
				}
				for _, want := range wants {
					if !strings.Contains(msg, want) {
						t.Errorf("warning %q lacks %q", msg, want)
					}
				}
			}
		})
	}
	if _, err := NewCollapseCheck(2, math.NaN()); err == nil {
		t.Error("window 2 accepted")
	}
}

// A policy that trails the rising target from the start never reaches it: before Grace α holds
// (the collapse protection of the early, spread policy), from Grace on it falls at Rate, and
// without a grace it would hold for the whole run.
func TestAutoGraceEndsAStall(t *testing.T) {
	// The stalled HalfCheetah seed: max-prob rising 0.2 → 0.72, always below a target 0.5 → 0.9.
	trailing := func(a *Auto, it int) float64 { return min(0.2+0.0005*float64(it), 0.72, a.Target(it)-0.05) }
	run := func(grace int) (atGrace, atEnd float64) {
		o := DefaultAuto(1)
		o.Grace = grace
		a, err := NewAuto(o)
		if err != nil {
			t.Fatal(err)
		}
		for it := range 10_000 {
			if it == 1000 {
				atGrace = a.Current()
			}
			a.Alpha(it, Stats{MaxProb: trailing(a, it)})
		}
		if a.State().Reached {
			t.Fatalf("grace %d: the trailing series reached the target", grace)
		}
		return atGrace, a.Current()
	}
	if g, e := run(0); g != 1 || e != 1 {
		t.Fatalf("without a grace: α %v at iteration 1000 and %v at the end, want 1 throughout (the stall)", g, e)
	}
	g, e := run(1000)
	if g != 1 {
		t.Errorf("grace 1000: α %v at iteration 1000, want 1: it must not fall before the grace", g)
	}
	if !(e < 0.5) {
		t.Errorf("grace 1000: α %v after 10,000 iterations of a policy trailing the target by ≥ 0.05, want < 0.5", e)
	}
	if got := DefaultAuto(1).Grace; got != 1000 {
		t.Errorf("DefaultAuto's grace %d, want 1000 (100,000 env steps at 100 per iteration)", got)
	}
}
