package pcl

import (
	"fmt"
	"math"
)

// PathInputs are the per-step quantities of B episodes, time-major: entry (t, b) is at t*B+b.
type PathInputs struct {
	T, B int
	// Lengths[b] is the number of steps L_b of episode b, 1 <= L_b <= T.
	Lengths []int
	// Terminated[b] says the episode ended in a terminal state (V = 0 there). Otherwise it was
	// truncated and bootstraps from Values at t = L_b.
	Terminated []bool
	// Values has (T+1)*B entries: V(s_t) for t <= L_b. Entries past L_b (and at L_b for terminated
	// episodes) are ignored.
	Values []float64
	// Rewards and Terms have T*B entries, valid for t < L_b. Terms is the per-step regularisation part
	// of the consistency (everything but the reward): -tau*log pi(a|s) for soft PCL,
	// alpha/2 - alpha*mu(a|s) + lambda(a|s) - Lambda(s) for sparse PCL.
	Rewards, Terms []float64
	// Targets, when not nil ((T+1)*B entries), are the values a path bootstraps from at its end
	// (a lagged network's): V(s+k) is read from Targets instead of Values, and gets no gradient.
	Targets []float64
	// Episodes, when > 0, is the number of episodes the loss averages over in place of B: the
	// batch these B episodes are a block of, so that each row's gradient is the whole batch's.
	Episodes int
}

// PathGrads receives the gradient of the loss with respect to Values ((T+1)*B) and Terms (T*B).
type PathGrads struct {
	DValues, DTerms []float64
}

func (in *PathInputs) check() error {
	if in.T < 1 || in.B < 1 {
		return fmt.Errorf("pcl: path inputs need T >= 1 and B >= 1, have T=%d B=%d", in.T, in.B)
	}
	if len(in.Lengths) != in.B || len(in.Terminated) != in.B {
		return fmt.Errorf("pcl: %d lengths and %d terminated flags for B=%d episodes", len(in.Lengths), len(in.Terminated), in.B)
	}
	if len(in.Values) != (in.T+1)*in.B {
		return fmt.Errorf("pcl: %d values, want (T+1)*B = %d", len(in.Values), (in.T+1)*in.B)
	}
	if in.Targets != nil && len(in.Targets) != len(in.Values) {
		return fmt.Errorf("pcl: %d bootstrap targets, want (T+1)*B = %d", len(in.Targets), len(in.Values))
	}
	if len(in.Rewards) != in.T*in.B || len(in.Terms) != in.T*in.B {
		return fmt.Errorf("pcl: %d rewards and %d terms, want T*B = %d", len(in.Rewards), len(in.Terms), in.T*in.B)
	}
	for b, l := range in.Lengths {
		if l < 1 || l > in.T {
			return fmt.Errorf("pcl: episode %d has length %d, want 1..%d", b, l, in.T)
		}
	}
	return nil
}

// PathLoss is the d-step path-consistency loss of the batch,
//
//	loss = (1/B) * sum_b sum_rows C^2 / 2,
//
// where the rows of an episode of length L are (pcl_reference_code.md section 2):
//
//   - the d-1 leading partial paths from state 0 of nominal length k = 1..d-1, scaled by gamma^(d-k);
//   - one path from every s = 0..L-1 of length k = min(d, L-s);
//
// and the consistency of a path from s of length k is
//
//	C = -V(s) + gamma^k V(s+k) + sum_{i<k} gamma^i (r_{s+i} + term_{s+i}),
//
// with V(s_L) = 0 for a terminated episode and the network's V(s_L) for a truncated one (discounted
// by gamma^k, not the reference code's gamma^(k-1)). With in.Targets, every bootstrap V(s+k) is
// read from there instead, as a constant. A leading path longer than the episode stops at
// its end. When g is non-nil, its slices (reused if large enough) receive the exact gradient of loss.
func PathLoss(in PathInputs, gamma float64, d int, g *PathGrads) (float64, error) {
	if err := in.check(); err != nil {
		return 0, err
	}
	if d < 1 {
		return 0, fmt.Errorf("pcl: rollout d = %d, want >= 1", d)
	}
	if !(gamma > 0 && gamma <= 1) {
		return 0, fmt.Errorf("pcl: gamma = %v, want (0, 1]", gamma)
	}
	if g != nil {
		g.DValues = zeroed(g.DValues, len(in.Values))
		g.DTerms = zeroed(g.DTerms, len(in.Terms))
	}
	var powBuf [32]float64 // γ^0..γ^d on the stack for the rollouts in use (d 10 in the paper)
	pow := powBuf[:0]
	if d+1 > len(powBuf) {
		pow = make([]float64, d+1)
	}
	pow = pow[:d+1]
	pow[0] = 1
	for i := 1; i <= d; i++ {
		pow[i] = pow[i-1] * gamma
	}
	B := in.B
	invB := 1 / float64(B)
	if in.Episodes > 0 {
		invB = 1 / float64(in.Episodes)
	}
	total := 0.0
	// One row: path from s of effective length k, scaled by w; x = r + term.
	boot := in.Values
	if in.Targets != nil {
		boot = in.Targets
	}
	row := func(b, s, k int, w float64) {
		L := in.Lengths[b]
		c := -in.Values[s*B+b]
		if s+k < L || !in.Terminated[b] {
			c += pow[k] * boot[(s+k)*B+b]
		}
		for i := 0; i < k; i++ {
			idx := (s+i)*B + b
			c += pow[i] * (in.Rewards[idx] + in.Terms[idx])
		}
		c *= w
		total += 0.5 * c * c
		if g == nil {
			return
		}
		dc := c * w * invB // d(loss)/d(unscaled c)
		g.DValues[s*B+b] -= dc
		if (s+k < L || !in.Terminated[b]) && in.Targets == nil {
			g.DValues[(s+k)*B+b] += dc * pow[k]
		}
		for i := 0; i < k; i++ {
			g.DTerms[(s+i)*B+b] += dc * pow[i]
		}
	}
	for b := 0; b < B; b++ {
		L := in.Lengths[b]
		for k := 1; k < d; k++ {
			row(b, 0, min(k, L), pow[d-k])
		}
		for s := 0; s < L; s++ {
			row(b, s, min(d, L-s), 1)
		}
	}
	loss := total * invB
	if math.IsNaN(loss) || math.IsInf(loss, 0) {
		return loss, fmt.Errorf("pcl: path-consistency loss is %v", loss)
	}
	return loss, nil
}

func zeroed(s []float64, n int) []float64 {
	if cap(s) < n {
		return make([]float64, n)
	}
	s = s[:n]
	clear(s)
	return s
}
