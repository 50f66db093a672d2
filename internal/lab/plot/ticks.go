package plot

import (
	"math"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
)

// ticks marks an axis with 5 to 8 labelled ticks at a round step (1, 2, 2.5 or 5 times a power of
// ten) and unlabelled ones halfway between. On a count axis (integer: iterations, env steps) the
// step is a whole number, so no label has a fraction.
type ticks struct {
	integer bool
}

// Ticks implements plot.Ticker.
func (t ticks) Ticks(lo, hi float64) []plot.Tick {
	if !(hi > lo) || math.IsInf(lo, 0) || math.IsInf(hi, 0) {
		return nil
	}
	s := niceStep(lo, hi, t.integer)
	kmin, kmax := s.span(lo, hi)
	maxAbs := math.Max(math.Abs(s.at(kmin)), math.Abs(s.at(kmax)))
	var out []plot.Tick
	for k := kmin; k <= kmax; k++ {
		out = append(out, plot.Tick{Value: s.at(k), Label: s.label(s.at(k), maxAbs)})
	}
	half := step{m: s.m / 2, e: s.e}
	if t.integer && half.size() != math.Round(half.size()) {
		return out
	}
	hmin, hmax := half.span(lo, hi)
	for k := hmin; k <= hmax; k++ {
		if k%2 != 0 {
			out = append(out, plot.Tick{Value: half.at(k)})
		}
	}
	return out
}

// step is m × 10^e. Values are computed as k·m / 10^-e for negative e so that 0.1-steps print
// as 0.3, not 0.30000000000000004.
type step struct {
	m float64
	e int
}

func (s step) at(k int) float64 {
	if s.e >= 0 {
		return float64(k) * s.m * math.Pow10(s.e)
	}
	return float64(k) * s.m / math.Pow10(-s.e)
}

func (s step) size() float64 { return s.at(1) }

// span is the range of multiples k of s with k·s in [lo, hi] (with a little slack for rounding).
func (s step) span(lo, hi float64) (int, int) {
	const slack = 1e-9
	return int(math.Ceil(lo/s.size() - slack)), int(math.Floor(hi/s.size() + slack))
}

// Labelled ticks an axis should have.
const (
	minTicks = 5
	maxTicks = 8
)

// candidates are the round steps from about a thousandth to ten times the range hi - lo, smallest
// first; whole numbers only on an integer axis.
func candidates(lo, hi float64, integer bool) []step {
	e0 := int(math.Floor(math.Log10(hi-lo))) - 2
	var out []step
	for e := e0; e <= e0+3; e++ {
		for _, m := range []float64{1, 2, 2.5, 5} {
			if integer && (e < 0 || (m == 2.5 && e < 1)) {
				continue
			}
			out = append(out, step{m: m, e: e})
		}
	}
	return out
}

// niceStep chooses the round step that gives 5 to 8 ticks in [lo, hi], 6 if it can; 2.5 only
// when neither neighbour fits. On an integer axis whose range is under 4 the step is 1.
func niceStep(lo, hi float64, integer bool) step {
	best, bestScore := step{m: 1}, math.Inf(1)
	for _, s := range candidates(lo, hi, integer) {
		kmin, kmax := s.span(lo, hi)
		n := kmax - kmin + 1
		var score float64
		switch {
		case n < minTicks:
			score = 10 + float64(minTicks-n)
		case n > maxTicks:
			score = 10 + float64(n-maxTicks)
		default:
			score = math.Abs(float64(n) - 6)
		}
		if s.m == 2.5 {
			score += 0.5
		}
		if score < bestScore {
			best, bestScore = s, score
		}
	}
	return best
}

// looseRange widens [lo, hi] outwards to multiples of a round step when no step gives 5 to 8
// ticks inside it (8.1..17.2: 9 ticks of 1 or 4 of 2; 8..18 has 6 of 2). It widens by at most a
// quarter of the range, and not at all when a step already fits.
func looseRange(lo, hi float64) (float64, float64) {
	if kmin, kmax := niceStep(lo, hi, false).span(lo, hi); kmax-kmin+1 >= minTicks && kmax-kmin+1 <= maxTicks {
		return lo, hi
	}
	// Score: the share of the range added, plus small penalties for a 2.5 step and for a count
	// away from 6, as in niceStep.
	bestLo, bestHi, bestScore := lo, hi, math.Inf(1)
	for _, s := range candidates(lo, hi, false) {
		klo, khi := math.Floor(lo/s.size()+1e-9), math.Ceil(hi/s.size()-1e-9)
		n := int(khi-klo) + 1
		if n < minTicks || n > maxTicks {
			continue
		}
		l, h := s.at(int(klo)), s.at(int(khi))
		widen := ((lo - l) + (h - hi)) / (hi - lo)
		if widen > 0.25 {
			continue
		}
		score := widen + 0.02*math.Abs(float64(n)-6)
		if s.m == 2.5 {
			score += 0.05
		}
		if score < bestScore {
			bestLo, bestHi, bestScore = l, h, score
		}
	}
	return bestLo, bestHi
}

// label prints v, a multiple of s, with as few decimals as it needs. On an axis that reaches
// 10,000 with steps of 1,000 or more, values are given in thousands (20k) or millions (1.5M);
// on other axes of whole numbers that reach 1,000, they get thousands separators.
func (s step) label(v, maxAbs float64) string {
	if v == 0 {
		return "0" // never "-0"
	}
	switch size := s.size(); {
	case size >= 1e5 && maxAbs >= 1e6:
		return trimZeros(strconv.FormatFloat(v/1e6, 'f', decimals(step{m: s.m, e: s.e - 6}), 64)) + "M"
	case size >= 1e3 && maxAbs >= 1e4:
		return trimZeros(strconv.FormatFloat(v/1e3, 'f', decimals(step{m: s.m, e: s.e - 3}), 64)) + "k"
	}
	d := decimals(s)
	if d == 0 && maxAbs >= 1e3 {
		return groupThousands(strconv.FormatFloat(v, 'f', 0, 64))
	}
	return trimZeros(strconv.FormatFloat(v, 'f', d, 64))
}

// decimals is the number of decimals that multiples of s need.
func decimals(s step) int {
	d := -s.e
	if s.m == 2.5 {
		d++
	}
	return max(d, 0)
}

// trimZeros drops trailing zeros after a decimal point, and the point itself if nothing is left.
func trimZeros(s string) string {
	if !strings.Contains(s, ".") {
		return s
	}
	return strings.TrimSuffix(strings.TrimRight(s, "0"), ".")
}

// groupThousands puts commas between groups of three digits of an integer's decimal form.
func groupThousands(s string) string {
	sign := ""
	if strings.HasPrefix(s, "-") {
		sign, s = "-", s[1:]
	}
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	return sign + b.String()
}
