package pcl

import "math"

// Stats summarises a policy over the visited states.
type Stats struct {
	Steps      int
	SupportSum float64 // sum over steps of |{a : pi(a) > 0}|
	MaxProbSum float64 // sum over steps of max_a pi(a)
}

// Add accumulates one distribution.
func (s *Stats) Add(p []float32) {
	k, mx := 0, float32(0)
	for _, v := range p {
		if v > 0 {
			k++
		}
		mx = max(mx, v)
	}
	s.Steps++
	s.SupportSum += float64(k)
	s.MaxProbSum += float64(mx)
}

// AddRow accumulates one distribution by its largest probability and support size (RowStats).
func (s *Stats) AddRow(maxProb, support float32) {
	s.Steps++
	s.SupportSum += float64(support)
	s.MaxProbSum += float64(maxProb)
}

// MeanSupport is the mean support size per step.
func (s Stats) MeanSupport() float64 { return s.SupportSum / math.Max(1, float64(s.Steps)) }

// MeanMaxProb is the mean probability of the most likely action per step.
func (s Stats) MeanMaxProb() float64 { return s.MaxProbSum / math.Max(1, float64(s.Steps)) }

// RowStats is the probability of the most likely action and the support size of p, as Stats
// counts them.
func RowStats(p []float32) (maxProb, support float32) {
	var st Stats
	st.Add(p)
	return float32(st.MaxProbSum), float32(st.SupportSum)
}
