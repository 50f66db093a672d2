package tabular

import (
	"math"
	"math/rand/v2"
	"testing"
)

var seeds = []uint64{1, 2, 3, 4, 5}

func randomMDP(t *testing.T, seed uint64) *MDP {
	t.Helper()
	m, err := RandomMDP(seed, 6+int(seed%3), 3+int(seed%4), 3, 0.9)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func solve(t *testing.T, m *MDP, obj Objective) *Solution {
	t.Helper()
	sol, err := ValueIteration(m, obj, 1e-13, 5000)
	if err != nil {
		t.Fatal(err)
	}
	return sol
}

// The regularised Bellman operators are gamma-contractions in sup norm.
func TestBellmanContraction(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	for _, seed := range seeds {
		m := randomMDP(t, seed)
		for _, obj := range []Objective{Hard(), Soft(0.5), Sparse(0.5), Tsallis(1.5, 0.5), Tsallis(3, 0.3)} {
			for r := 0; r < 20; r++ {
				v1, v2 := make([]float64, m.States), make([]float64, m.States)
				var d float64
				for s := range v1 {
					v1[s], v2[s] = 10*rng.NormFloat64(), 10*rng.NormFloat64()
					d = math.Max(d, math.Abs(v1[s]-v2[s]))
				}
				t1, t2 := make([]float64, m.States), make([]float64, m.States)
				Bellman(t1, m, obj, v1)
				Bellman(t2, m, obj, v2)
				var dt float64
				for s := range t1 {
					dt = math.Max(dt, math.Abs(t1[s]-t2[s]))
				}
				if dt > m.Gamma*d+1e-9 {
					t.Fatalf("%v seed %d: |TV1-TV2| = %v > gamma |V1-V2| = %v", obj, seed, dt, m.Gamma*d)
				}
			}
		}
	}
}

// Theorem 1: (V*, mu*) of the sparse MDP satisfy the one-step and d-step
// consistency equations with lambda >= 0, lambda mu = 0, Lambda in
// [-alpha/2, 0]; and the multipliers that fit (V*, mu*) best are exactly
// the ones of the proof (off-support slack = alpha (G - z_a)).
func TestTheorem1OptimalityImpliesConsistency(t *testing.T) {
	for _, seed := range seeds {
		for _, alpha := range []float64{0.1, 0.5, 2} {
			m := randomMDP(t, seed)
			sol := solve(t, m, Sparse(alpha))
			mult, err := OptimalSparseMultipliers(m, sol)
			if err != nil {
				t.Fatal(err)
			}
			if v := MultiplierViolation(m, alpha, sol.Policy, mult); v != 0 {
				t.Fatalf("seed %d alpha %v: multiplier constraints violated by %v", seed, alpha, v)
			}
			term := SparseTerms(m, alpha, sol.Policy, mult)
			if v := OneStepViolation(m, sol.V, term); v > 1e-10 {
				t.Fatalf("seed %d alpha %v: one-step violation %v", seed, alpha, v)
			}
			for d := 1; d <= 3; d++ {
				v, err := MultiStepViolation(m, sol.V, term, d)
				if err != nil {
					t.Fatal(err)
				}
				if v > 1e-10 {
					t.Fatalf("seed %d alpha %v: %d-step violation %v", seed, alpha, d, v)
				}
			}
			best := BestSparseMultipliers(m, alpha, sol.V, sol.Policy)
			for i := range best.Small {
				if math.Abs(best.Small[i]-mult.Small[i]) > 1e-9 {
					t.Fatalf("off-support slack %v, formula alpha(G - z_a) = %v", best.Small[i], mult.Small[i])
				}
			}
			for s := range best.Big {
				if math.Abs(best.Big[s]-mult.Big[s]) > 1e-9 {
					t.Fatalf("Lambda %v, formula -(alpha/2) sum mu^2 = %v", best.Big[s], mult.Big[s])
				}
			}
			// A wrong factor in the multipliers is caught.
			wrong := SparseMultipliers{Small: mult.Small, Big: make([]float64, len(mult.Big))}
			for s := range wrong.Big {
				wrong.Big[s] = mult.Big[s] / 2
			}
			if v := OneStepViolation(m, sol.V, SparseTerms(m, alpha, sol.Policy, wrong)); v < 1e-3*alpha {
				t.Fatalf("halved Lambda still consistent (violation %v)", v)
			}
		}
	}
}

// Theorem 2 and its corollary: any consistent (V, mu) (here: every
// prescribed Lambda in [-alpha/2, 0]) is alpha/(1-gamma)-optimal in the
// sparse MDP and (3/2 - 1/|A|) alpha/(1-gamma)-optimal in the original MDP;
// a perturbed, non-consistent policy shows a measurable violation.
func TestTheorem2ConsistencyImpliesNearOptimality(t *testing.T) {
	rng := rand.New(rand.NewPCG(77, 1))
	nonOptimal := 0
	for _, seed := range seeds {
		for _, alpha := range []float64{0.5, 2} {
			m := randomMDP(t, seed)
			opt := solve(t, m, Sparse(alpha))
			hard := solve(t, m, Hard())
			for trial := 0; trial < 4; trial++ {
				big := make([]float64, m.States)
				for s := range big {
					switch trial {
					case 0:
						big[s] = 0
					case 1:
						big[s] = -alpha / 2
					default:
						big[s] = -alpha / 2 * rng.Float64()
					}
				}
				v, mu, mult, err := ConsistentSparse(m, alpha, big, 1e-13, 5000)
				if err != nil {
					t.Fatal(err)
				}
				if vi := OneStepViolation(m, v, SparseTerms(m, alpha, mu, mult)); vi > 1e-10 {
					t.Fatalf("constructed solution violates consistency by %v", vi)
				}
				if vi := MultiplierViolation(m, alpha, mu, mult); vi != 0 {
					t.Fatalf("constructed multipliers violate constraints by %v", vi)
				}
				vsp, err := Evaluate(m, Sparse(alpha), mu)
				if err != nil {
					t.Fatal(err)
				}
				vhard, err := Evaluate(m, Hard(), mu)
				if err != nil {
					t.Fatal(err)
				}
				bound := alpha / (1 - m.Gamma)
				corollary := (1.5 - 1/float64(m.Actions)) * alpha / (1 - m.Gamma)
				for s := range vsp {
					if vsp[s] < opt.V[s]-bound-1e-9 || vsp[s] > opt.V[s]+1e-9 {
						t.Fatalf("seed %d: V^mu_sp(%d) = %v not in [V*_sp - alpha/(1-gamma), V*_sp] = [%v, %v]", seed, s, vsp[s], opt.V[s]-bound, opt.V[s])
					}
					if vhard[s] < hard.V[s]-corollary-1e-9 || vhard[s] > hard.V[s]+1e-9 {
						t.Fatalf("seed %d: V^mu(%d) = %v not within the corollary's bound of V* = %v", seed, s, vhard[s], hard.V[s])
					}
					if math.Abs(vsp[s]-opt.V[s]) > 1e-6 {
						nonOptimal++
					}
				}
			}
			// Perturb mu*: mix with a random distribution.
			pert := append([]float64(nil), opt.Policy...)
			A := m.Actions
			for s := 0; s < m.States; s++ {
				var sum float64
				for a := 0; a < A; a++ {
					pert[s*A+a] = 0.8*pert[s*A+a] + 0.2*rng.Float64()
					sum += pert[s*A+a]
				}
				for a := 0; a < A; a++ {
					pert[s*A+a] /= sum
				}
			}
			vp, err := Evaluate(m, Sparse(alpha), pert)
			if err != nil {
				t.Fatal(err)
			}
			mult := BestSparseMultipliers(m, alpha, vp, pert)
			if vi := OneStepViolation(m, vp, SparseTerms(m, alpha, pert, mult)); vi < 1e-3 {
				t.Fatalf("seed %d alpha %v: perturbed policy looks consistent (violation %v)", seed, alpha, vi)
			}
		}
	}
	if nonOptimal == 0 {
		t.Fatal("every consistent solution was optimal: the near-optimality check is vacuous")
	}
}

// Eqs. perf-soft and perf-sparse (and F14 for general alpha) at every state.
func TestPerformanceBounds(t *testing.T) {
	for _, seed := range seeds {
		m := randomMDP(t, seed)
		hard := solve(t, m, Hard())
		for _, obj := range []Objective{Soft(0.5), Sparse(0.5), Tsallis(1.5, 0.5), Tsallis(3, 0.5), Soft(2), Sparse(2)} {
			sol := solve(t, m, obj)
			v, err := Evaluate(m, Hard(), sol.Policy)
			if err != nil {
				t.Fatal(err)
			}
			gap := obj.Temp / (1 - m.Gamma) * obj.MaxEntropy(m.Actions)
			for s := range v {
				if v[s] < hard.V[s]-gap-1e-9 || v[s] > hard.V[s]+1e-9 {
					t.Fatalf("seed %d %v: V(%d) = %v outside [V* - %v, V*] with V* = %v", seed, obj, s, v[s], gap, hard.V[s])
				}
			}
			// The regularised value of the optimal policy is V*_obj itself.
			vr, err := Evaluate(m, obj, sol.Policy)
			if err != nil {
				t.Fatal(err)
			}
			for s := range vr {
				if math.Abs(vr[s]-sol.V[s]) > 1e-9 {
					t.Fatalf("%v: evaluation %v vs value iteration %v", obj, vr[s], sol.V[s])
				}
			}
		}
	}
}

// sparse_math.md 2.3: gamma = 0.9, temperature 0.5, r = [1, 0, ..., 0].
func TestBanditActionSweep(t *testing.T) {
	for _, c := range []struct {
		k    int
		soft float64
	}{{2, 8.8080}, {10, 4.5085}, {100, 0.6945}, {1000, 0.0734}} {
		m, err := Bandit(c.k, 0.9)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range []struct {
			obj  Objective
			want float64
		}{{Sparse(0.5), 10}, {Soft(0.5), c.soft}} {
			sol := solve(t, m, o.obj)
			v, err := Evaluate(m, Hard(), sol.Policy)
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(v[0]-o.want) > 1e-4 {
				t.Fatalf("K=%d %v: J = %.6f, want %v", c.k, o.obj, v[0], o.want)
			}
			t.Logf("K=%d %v: J = %.4f", c.k, o.obj, v[0])
		}
	}
}

// alpha -> 1 approaches the soft solution; alpha = 2 is the sparse one.
func TestTsallisLimits(t *testing.T) {
	m := randomMDP(t, 3)
	soft := solve(t, m, Soft(0.5))
	prev := math.Inf(1)
	for _, alpha := range []float64{1.1, 1.01, 1.001} {
		sol := solve(t, m, Tsallis(alpha, 0.5))
		var d float64
		for s := range sol.V {
			d = math.Max(d, math.Abs(sol.V[s]-soft.V[s]))
		}
		if d >= prev/3 {
			t.Fatalf("alpha=%v: |V_alpha - V_soft| = %v, did not shrink (previous %v)", alpha, d, prev)
		}
		prev = d
	}
	if prev > 0.05 {
		t.Fatalf("alpha=1.001 is %v from soft", prev)
	}
}

// sparse_math.md 6.6: the one-step and d-step Tsallis consistency error is
// 0 at (V*, pi*) for alpha in {1, 1.5, 2, 3}, and the soft PCL terms
// (-temp log pi) are exactly the alpha = 1 case.
func TestTsallisConsistencyAtOptimum(t *testing.T) {
	for _, seed := range seeds[:3] {
		m := randomMDP(t, seed)
		for _, alpha := range []float64{1, 1.5, 2, 3} {
			sol := solve(t, m, Tsallis(alpha, 0.4))
			term := TsallisTerms(m, sol)
			if v := OneStepViolation(m, sol.V, term); v > 1e-10 {
				t.Fatalf("seed %d alpha %v: one-step violation %v", seed, alpha, v)
			}
			for d := 2; d <= 3; d++ {
				v, err := MultiStepViolation(m, sol.V, term, d)
				if err != nil {
					t.Fatal(err)
				}
				if v > 1e-10 {
					t.Fatalf("seed %d alpha %v: %d-step violation %v", seed, alpha, d, v)
				}
			}
			if alpha == 1 {
				if v := OneStepViolation(m, sol.V, SoftTerms(m, 0.4, sol.Policy)); v > 1e-10 {
					t.Fatalf("soft terms violation %v", v)
				}
				// A wrong temperature is detected.
				if v := OneStepViolation(m, sol.V, SoftTerms(m, 0.8, sol.Policy)); v < 1e-3 {
					t.Fatalf("doubled temperature still consistent (%v)", v)
				}
			}
		}
	}
}

// sparse_math.md 3.5 (clean FrozenLake, Lee-2019 normalisation temp 0.1:
// our temperature is 0.1*q): J(pi*_q) from the start state, the lower
// bound, monotonicity in q and the shrinking support.
func TestFrozenLakeTsallisSweep(t *testing.T) {
	m, start, err := FrozenLake4Hole(0.7)
	if err != nil {
		t.Fatal(err)
	}
	hard := solve(t, m, Hard())
	if math.Abs(hard.V[start]-0.103976) > 1e-6 {
		t.Fatalf("J* = %v, want 0.103976", hard.V[start])
	}
	prevJ, prevSupport := math.Inf(-1), m.Actions+1
	for _, c := range []struct{ q, j float64 }{
		{1, -0.002337}, {1.5, 0.009227}, {2, 0.030660}, {3, 0.060941}, {5, 0.082356}, {10, 0.095489},
	} {
		obj := Tsallis(c.q, 0.1*c.q)
		sol := solve(t, m, obj)
		v, err := Evaluate(m, Hard(), sol.Policy)
		if err != nil {
			t.Fatal(err)
		}
		j := v[start]
		if math.Abs(j-c.j) > 2e-6 {
			t.Fatalf("q=%v: J = %.6f, want %.6f", c.q, j, c.j)
		}
		lower := hard.V[start] - obj.Temp/(1-m.Gamma)*obj.MaxEntropy(m.Actions)
		if j < lower || j > hard.V[start] || j <= prevJ {
			t.Fatalf("q=%v: J = %v, bounds [%v, %v], previous %v", c.q, j, lower, hard.V[start], prevJ)
		}
		support := 0
		for a := 0; a < m.Actions; a++ {
			if sol.Policy[start*m.Actions+a] > 0 {
				support++
			}
		}
		if support > prevSupport {
			t.Fatalf("q=%v: support %d grew from %d", c.q, support, prevSupport)
		}
		prevJ, prevSupport = j, support
	}
	if prevSupport != 2 {
		t.Fatalf("support at q=10 is %d, want 2", prevSupport)
	}
}

func TestValidationErrors(t *testing.T) {
	good, _ := Bandit(3, 0.9)
	cases := map[string]*MDP{
		"nil":       nil,
		"gamma":     {States: 1, Actions: 3, Gamma: 1, P: good.P, R: good.R},
		"P length":  {States: 1, Actions: 3, Gamma: 0.9, P: good.P[:2], R: good.R},
		"P sum":     {States: 1, Actions: 3, Gamma: 0.9, P: []float64{1, 0.5, 1}, R: good.R},
		"R NaN":     {States: 1, Actions: 3, Gamma: 0.9, P: good.P, R: []float64{math.NaN(), 0, 0}},
		"no states": {States: 0, Actions: 3, Gamma: 0.9},
	}
	for name, m := range cases {
		if err := m.Validate(); err == nil {
			t.Fatalf("%s: invalid MDP accepted", name)
		}
		if _, err := ValueIteration(m, Soft(1), 1e-9, 10); err == nil {
			t.Fatalf("%s: value iteration accepted an invalid MDP", name)
		}
	}
	if _, err := ValueIteration(good, Objective{Alpha: 0.5, Temp: 1}, 1e-9, 10); err == nil {
		t.Fatal("alpha < 1 accepted")
	}
	if _, err := ValueIteration(good, Soft(1), 1e-12, 3); err == nil {
		t.Fatal("non-convergence not reported")
	}
	if _, err := Evaluate(good, Hard(), []float64{0.5, 0.5, 0.5}); err == nil {
		t.Fatal("policy not summing to 1 accepted")
	}
	for _, layout := range [][]string{{}, {"SFX"}, {"SF", "F"}, {"FF"}, {"SS"}} {
		if _, _, err := Gridworld(layout, 0.2, 1, 0, 0.9); err == nil {
			t.Fatalf("layout %v accepted", layout)
		}
	}
	if _, err := MultiStepViolation(good, []float64{0}, func(int, int) float64 { return 0 }, 0); err == nil {
		t.Fatal("d = 0 accepted")
	}
	if _, _, _, err := ConsistentSparse(good, 1, []float64{0.1}, 1e-9, 10); err == nil {
		t.Fatal("Lambda > 0 accepted")
	}
}
