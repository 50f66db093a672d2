package tabular

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
)

// MDP is a finite Markov decision process with expected rewards.
// P[(s*A+a)*S+s'] is the probability of s' after action a in state s and
// R[s*A+a] the expected reward. A Terminal state is absorbing with value 0
// under every objective (no reward and no entropy bonus there), which is
// how episodic tasks are expressed.
type MDP struct {
	States, Actions int
	Gamma           float64
	P               []float64
	R               []float64
	Terminal        []bool // nil: no terminal state
}

// Validate checks the shapes, the discount and that every transition row
// is a probability distribution.
func (m *MDP) Validate() error {
	if m == nil {
		return errors.New("tabular: nil MDP")
	}
	if m.States < 1 || m.Actions < 1 {
		return fmt.Errorf("tabular: MDP needs at least one state and one action, has %d states and %d actions", m.States, m.Actions)
	}
	if !(m.Gamma >= 0 && m.Gamma < 1) {
		return fmt.Errorf("tabular: discount gamma = %v must be in [0, 1)", m.Gamma)
	}
	S, A := m.States, m.Actions
	if len(m.P) != S*A*S {
		return fmt.Errorf("tabular: P has %d entries, want states*actions*states = %d", len(m.P), S*A*S)
	}
	if len(m.R) != S*A {
		return fmt.Errorf("tabular: R has %d entries, want states*actions = %d", len(m.R), S*A)
	}
	if m.Terminal != nil && len(m.Terminal) != S {
		return fmt.Errorf("tabular: Terminal has %d entries, want %d", len(m.Terminal), S)
	}
	for s := 0; s < S; s++ {
		for a := 0; a < A; a++ {
			if r := m.R[s*A+a]; math.IsNaN(r) || math.IsInf(r, 0) {
				return fmt.Errorf("tabular: reward R(%d,%d) = %v is not finite", s, a, r)
			}
			var sum float64
			for _, p := range m.P[(s*A+a)*S : (s*A+a+1)*S] {
				if !(p >= 0) {
					return fmt.Errorf("tabular: P(.|%d,%d) has entry %v < 0", s, a, p)
				}
				sum += p
			}
			if math.Abs(sum-1) > 1e-9 {
				return fmt.Errorf("tabular: P(.|%d,%d) sums to %v, want 1", s, a, sum)
			}
		}
	}
	return nil
}

func (m *MDP) terminal(s int) bool { return m.Terminal != nil && m.Terminal[s] }

// ActionValues writes Q(s,a) = R(s,a) + gamma sum_s' P(s'|s,a) V(s') into q
// (length States*Actions); Q is 0 in terminal states.
func (m *MDP) ActionValues(q, v []float64) {
	S, A := m.States, m.Actions
	for s := 0; s < S; s++ {
		for a := 0; a < A; a++ {
			if m.terminal(s) {
				q[s*A+a] = 0
				continue
			}
			row := m.P[(s*A+a)*S : (s*A+a+1)*S]
			var e float64
			for s2, p := range row {
				if p != 0 {
					e += p * v[s2]
				}
			}
			q[s*A+a] = m.R[s*A+a] + m.Gamma*e
		}
	}
}

// RandomMDP draws an MDP from seed: each (s, a) reaches branching distinct
// next states (at most states) with Dirichlet(1) probabilities, and has a
// reward uniform in [0, 1).
func RandomMDP(seed uint64, states, actions, branching int, gamma float64) (*MDP, error) {
	if branching < 1 || branching > states {
		return nil, fmt.Errorf("tabular: branching %d must be in [1, states=%d]", branching, states)
	}
	if states < 1 || actions < 1 {
		return nil, fmt.Errorf("tabular: random MDP needs states, actions >= 1, got %d, %d", states, actions)
	}
	rng := rand.New(rand.NewPCG(seed, 0x7ab))
	m := &MDP{States: states, Actions: actions, Gamma: gamma,
		P: make([]float64, states*actions*states), R: make([]float64, states*actions)}
	for sa := 0; sa < states*actions; sa++ {
		m.R[sa] = rng.Float64()
		row := m.P[sa*states : (sa+1)*states]
		var sum float64
		for _, s2 := range rng.Perm(states)[:branching] {
			w := rng.ExpFloat64()
			row[s2] = w
			sum += w
		}
		for i := range row {
			row[i] /= sum
		}
	}
	return m, m.Validate()
}

// Bandit is the one-state MDP of sparse_math.md 2.3: k actions, the
// state loops on itself, action 0 pays 1 and the others 0.
func Bandit(k int, gamma float64) (*MDP, error) {
	if k < 1 {
		return nil, fmt.Errorf("tabular: bandit needs at least one action, got %d", k)
	}
	m := &MDP{States: 1, Actions: k, Gamma: gamma, P: make([]float64, k), R: make([]float64, k)}
	for a := range m.P {
		m.P[a] = 1
	}
	m.R[0] = 1
	return m, m.Validate()
}

// Gridworld builds a slippery grid from a layout of equal-length rows:
// 'S' start, 'F' floor, 'H' hole, 'G' goal. Actions are left, down, right,
// up (Gymnasium's FrozenLake order). The intended move happens with
// probability 1-slip and each perpendicular move with slip/2; a move into a
// wall stays put (probabilities of moves landing on the same cell are
// added). Entering G pays goalReward, entering H pays holeReward; G and H
// are terminal. It returns the MDP and the start state.
func Gridworld(layout []string, slip, goalReward, holeReward, gamma float64) (*MDP, int, error) {
	if len(layout) == 0 || len(layout[0]) == 0 {
		return nil, 0, errors.New("tabular: empty gridworld layout")
	}
	if !(slip >= 0 && slip <= 1) {
		return nil, 0, fmt.Errorf("tabular: slip %v must be in [0, 1]", slip)
	}
	rows, cols := len(layout), len(layout[0])
	start := -1
	for r, line := range layout {
		if len(line) != cols {
			return nil, 0, fmt.Errorf("tabular: layout row %d has %d cells, row 0 has %d", r, len(line), cols)
		}
		for c, ch := range line {
			switch ch {
			case 'S':
				if start >= 0 {
					return nil, 0, fmt.Errorf("tabular: layout has a second start at row %d column %d", r, c)
				}
				start = r*cols + c
			case 'F', 'H', 'G':
			default:
				return nil, 0, fmt.Errorf("tabular: layout row %d column %d: unknown cell %q (want S, F, H or G)", r, c, ch)
			}
		}
	}
	if start < 0 {
		return nil, 0, errors.New("tabular: layout has no start cell S")
	}
	S, A := rows*cols, 4
	m := &MDP{States: S, Actions: A, Gamma: gamma, P: make([]float64, S*A*S), R: make([]float64, S*A), Terminal: make([]bool, S)}
	dr := []int{0, 1, 0, -1} // left, down, right, up
	dc := []int{-1, 0, 1, 0}
	move := func(s, a int) int {
		r, c := s/cols+dr[a], s%cols+dc[a]
		if r < 0 || r >= rows || c < 0 || c >= cols {
			return s
		}
		return r*cols + c
	}
	cell := func(s int) byte { return layout[s/cols][s%cols] }
	for s := 0; s < S; s++ {
		m.Terminal[s] = cell(s) == 'H' || cell(s) == 'G'
		for a := 0; a < A; a++ {
			row := m.P[(s*A+a)*S : (s*A+a+1)*S]
			if m.Terminal[s] {
				row[s] = 1
				continue
			}
			for _, mv := range []struct {
				dir int
				p   float64
			}{{a, 1 - slip}, {(a + 1) % 4, slip / 2}, {(a + 3) % 4, slip / 2}} {
				s2 := move(s, mv.dir)
				row[s2] += mv.p
				switch cell(s2) {
				case 'G':
					m.R[s*A+a] += mv.p * goalReward
				case 'H':
					m.R[s*A+a] += mv.p * holeReward
				}
			}
		}
	}
	return m, start, m.Validate()
}

// FrozenLake4Hole is the "4-HOLE" map of sparse_math.md 3.5 (clean
// variant): slip 0.2, +2 for entering the goal, -0.5 for a hole.
func FrozenLake4Hole(gamma float64) (*MDP, int, error) {
	return Gridworld([]string{"SFFH", "FHFF", "FHFF", "FFHG"}, 0.2, 2, -0.5, gamma)
}
