package policy

import (
	"fmt"
	"math"
	"testing"
)

// The default (Auto) sparsemax solves only the candidates above max - 1,
// found in the pass that finds the maximum. These tests compare it, and
// everything that goes through it (SparsemaxThreshold, Spmax, Entmax with
// alpha = 2), with the sort algorithm on the full row, on rows built to sit
// on the boundaries of the prefilter and on many random rows.

// autoTol is the absolute tolerance on p and on tau/(1 + |max z|) between
// Auto and Sort: they sum the support in different orders.
func autoTol[T Float]() float64 {
	if T(1<<24)+1 == T(1<<24) {
		return 1e-6 // float32 p: one ulp of rounding either way
	}
	return 1e-12
}

// checkAuto compares Auto with the full-row sort on z (and valid). wantK >= 0
// also fixes the support size; wantK = 0 means a NaN row.
func checkAuto[T Float](t *testing.T, name string, z []T, valid []bool, wantK int) {
	t.Helper()
	k := len(z)
	ref := make([]T, k)
	tauR, kR := SparsemaxWith(Sort, ref, z, valid)
	if wantK >= 0 && kR != wantK {
		t.Fatalf("%s: sort reference has support %d, the case wants %d", name, kR, wantK)
	}
	p := make([]T, k)
	for i := range p {
		p[i] = 7 // every entry must be written
	}
	tau, kk := Sparsemax(p, z, valid)
	scratch := make([]T, k)
	for i := range scratch {
		scratch[i] = -3
	}
	tauT, kT := SparsemaxThreshold(Auto, z, valid, scratch)
	pe := make([]T, k)
	tauE, kE := Entmax(pe, z, valid, 2)
	if kR == 0 {
		if kk != 0 || !math.IsNaN(tau) || kT != 0 || !math.IsNaN(tauT) || kE != 0 {
			t.Fatalf("%s: want a NaN row, got tau,k = %v,%d (threshold %v,%d; entmax k %d)", name, tau, kk, tauT, kT, kE)
		}
		for i := range p {
			if !math.IsNaN(float64(p[i])) || !math.IsNaN(float64(pe[i])) {
				t.Fatalf("%s: p[%d] = %v, entmax %v; want NaN", name, i, p[i], pe[i])
			}
		}
		if v := Spmax(z, valid, scratch); !math.IsNaN(v) {
			t.Fatalf("%s: spmax = %v, want NaN", name, v)
		}
		return
	}
	m, _, _ := maxUsable(z, valid)
	tol := autoTol[T]()
	tauTol := 1e-12 * (1 + math.Abs(m))
	if kk != kR || math.Abs(tau-tauR) > tauTol {
		t.Fatalf("%s: auto tau,k = %.17g,%d; sort %.17g,%d%s", name, tau, kk, tauR, kR, short(z, valid))
	}
	if kT != kR || math.Abs(tauT-tauR) > tauTol {
		t.Fatalf("%s: SparsemaxThreshold(Auto) = %.17g,%d; sort %.17g,%d", name, tauT, kT, tauR, kR)
	}
	if kE != kk || tauE != tau {
		t.Fatalf("%s: Entmax(alpha=2) = %v,%d; Sparsemax %v,%d", name, tauE, kE, tau, kk)
	}
	var sum float64
	pos := 0
	for i := range p {
		if math.Abs(float64(p[i])-float64(ref[i])) > tol {
			t.Fatalf("%s: p[%d] = %v, sort gives %v (z = %v)", name, i, p[i], ref[i], z[i])
		}
		if pe[i] != p[i] {
			t.Fatalf("%s: Entmax(alpha=2)[%d] = %v, Sparsemax %v", name, i, pe[i], p[i])
		}
		if valid != nil && !valid[i] && p[i] != 0 {
			t.Fatalf("%s: masked entry %d has p = %v", name, i, p[i])
		}
		if p[i] > 0 {
			pos++
		}
		sum += float64(p[i])
	}
	if math.Abs(sum-1) > tol*float64(1+kk) {
		t.Fatalf("%s: sum p = %.17g", name, sum)
	}
	if pos > kk {
		t.Fatalf("%s: %d positive probabilities, support %d", name, pos, kk)
	}
	// SpmaxFromProbs works from the rounded probabilities of T: tol.
	want := SpmaxFromProbs(z, ref, valid)
	if v := Spmax(z, valid, scratch); math.Abs(v-want) > math.Max(tol, 1e-9)*(1+math.Abs(m)) {
		t.Fatalf("%s: spmax = %.17g, from the sort probabilities %.17g", name, v, want)
	}
}

// short prints a small row and its mask for a failure message.
func short[T Float](z []T, valid []bool) string {
	if len(z) > 20 {
		return ""
	}
	return fmt.Sprintf(" (z = %v, valid = %v)", z, valid)
}

func filled[T Float](k int, v T) []T {
	z := make([]T, k)
	for i := range z {
		z[i] = v
	}
	return z
}

// prefilterCases are rows on the boundaries of the prefilter; want is the
// support size (0: NaN row, -1: not fixed by the case).
func prefilterCases[T Float]() []struct {
	name  string
	z     []T
	valid []bool
	want  int
} {
	const K = 15625
	nan, inf := T(math.NaN()), T(math.Inf(1))
	type c = struct {
		name  string
		z     []T
		valid []bool
		want  int
	}
	var cases []c
	add := func(name string, z []T, valid []bool, want int) {
		cases = append(cases, c{name, z, valid, want})
	}
	// Ties exactly at max - 1 are not in the support; 2^-20 above (a step
	// the sums represent exactly) they all are (1 + j y > sum holds for
	// every prefix); one ulp below none is. (One ulp above is checked on
	// the candidates directly in TestCandidatesKeepOneUlpAbove: there the
	// sums themselves round.)
	below1 := T(math.Nextafter32(-1, -2))
	if _, ok := any(below1).(float64); ok {
		below1 = T(math.Nextafter(-1, -2))
	}
	for _, k := range []int{2, 7, 8, 100, K} {
		z := filled(k, T(2))
		z[k/2] = 3
		add(fmt.Sprintf("K=%d ties at max-1", k), z, nil, 1)
		up := filled(k, T(-1+1.0/(1<<20)))
		up[0] = 0
		add(fmt.Sprintf("K=%d 2^-20 above max-1", k), up, nil, k)
		down := filled(k, below1)
		down[k-1] = 0
		add(fmt.Sprintf("K=%d one ulp below max-1", k), down, nil, 1)
		add(fmt.Sprintf("K=%d all equal", k), filled(k, T(-0.3)), nil, k)
		add(fmt.Sprintf("K=%d all zero", k), filled(k, T(0)), nil, k)
	}
	// Entries exactly at the threshold have p = 0 and are not counted
	// (Condat's rounded running threshold used to keep them: support 6).
	add("ties at the threshold", []T{-0.25, 0.25, 0.25, 0, 0, 0.25, -0.25, 0.25}, nil, 4)
	// K = 1 and tiny rows.
	add("K=1", []T{5}, nil, 1)
	add("K=1 -Inf", []T{T(math.Inf(-1))}, nil, 0)
	add("K=1 NaN", []T{nan}, nil, 0)
	add("K=1 masked", []T{5}, []bool{false}, 0)
	add("K=0", []T{}, nil, 0)
	// Half the row is a candidate (scatter path) and just over half (in
	// place): both layouts of the candidates.
	for _, k := range []int{2, 10, 11, 1000, 1001, K} {
		z := filled(k, T(-5))
		for i := 0; i < k/2; i++ {
			z[2*i] = 1
		}
		add(fmt.Sprintf("K=%d half candidates", k), z, nil, k/2)
		z2 := filled(k, T(1))
		for i := 0; i < k/2-1; i++ {
			z2[2*i+1] = -5
		}
		add(fmt.Sprintf("K=%d over half candidates", k), z2, nil, k-(k/2-1))
	}
	// The running maximum moves at every entry (ascending), never
	// (descending), or late.
	asc := make([]T, K)
	desc := make([]T, K)
	for i := range asc {
		asc[i] = T(float64(i) / 4096)
		desc[K-1-i] = asc[i]
	}
	add("ascending", asc, nil, -1)
	add("descending", desc, nil, -1)
	late := filled(K, T(0.5))
	late[K-1] = 1.6
	add("max last, old candidates dropped", late, nil, 1)
	// NaN and +Inf are caught wherever they are, also below the bound
	// (where a comparison alone would skip a NaN).
	for _, pos := range []int{0, 1, K / 2, K - 1} {
		z := filled(K, T(-10))
		z[K/3] = 10
		z[pos] = nan
		add(fmt.Sprintf("NaN at %d", pos), z, nil, 0)
		z = filled(K, T(-10))
		z[K/3] = 10
		z[pos] = inf
		add(fmt.Sprintf("+Inf at %d", pos), z, nil, 0)
	}
	// -Inf counts as masked.
	ninf := filled(K, T(math.Inf(-1)))
	add("all -Inf", ninf, nil, 0)
	ninf2 := filled(K, T(math.Inf(-1)))
	ninf2[K-1], ninf2[7] = 0, -0.5
	add("-Inf and two entries", ninf2, nil, 2)
	// Masks: a masked NaN, +Inf or maximum does not count; all masked is
	// a NaN row.
	mz := make([]T, K)
	valid := make([]bool, K)
	for i := range mz {
		mz[i] = T(math.Sin(float64(i)) * 3)
		valid[i] = i%3 != 0
	}
	mz[0], mz[3], mz[6] = nan, inf, 100
	add("masked NaN, +Inf and max", mz, valid, -1)
	add("all masked", filled(K, T(1)), make([]bool, K), 0)
	vnan := filled(K, T(0))
	vnan[5] = nan
	all := make([]bool, K)
	for i := range all {
		all[i] = true
	}
	add("valid NaN under a mask", vnan, all, 0)
	add("all valid", asc, all, -1)
	// Large magnitudes: the margin of the bound scales with |max|.
	big := filled(K, T(1e30))
	big[3] = T(1e30 * (1 + 1e-6))
	add("1e30", big, nil, -1)
	neg := filled(100, T(-3e38))
	neg[50] = T(-3e38 + 1e33)
	add("near -max float", neg, nil, -1)
	return cases
}

func TestAutoPrefilterCases(t *testing.T) {
	for _, c := range prefilterCases[float64]() {
		t.Run("float64/"+c.name, func(t *testing.T) { checkAuto(t, c.name, c.z, c.valid, c.want) })
	}
	for _, c := range prefilterCases[float32]() {
		t.Run("float32/"+c.name, func(t *testing.T) { checkAuto(t, c.name, c.z, c.valid, c.want) })
	}
}

// Auto against sort on many random rows: small sizes (many rows) and the
// 5^6 grid (fewer rows), scales from all-candidates (0.01) to one-hot (50),
// rounded rows full of ties, and random masks.
func TestAutoMatchesSortRandom(t *testing.T) {
	rng := newRNG(21)
	type size struct{ k, reps int }
	sizes := []size{{1, 50}, {2, 200}, {3, 200}, {5, 200}, {8, 200}, {13, 200}, {40, 100}, {160, 40}, {729, 10}, {15625, 4}}
	if testing.Short() {
		sizes[len(sizes)-1].reps = 1
	}
	rows := 0
	for _, s := range sizes {
		for _, scale := range []float64{0.01, 0.3, 1, 5, 50} {
			for r := 0; r < s.reps; r++ {
				z := randomLogits(rng, s.k, scale)
				switch r % 4 {
				case 1: // ties
					for i := range z {
						z[i] = math.Round(z[i]*4) / 4
					}
				case 2: // shifted far from 0
					for i := range z {
						z[i] += 1e4
					}
				}
				var valid []bool
				if r%3 == 2 {
					valid = make([]bool, s.k)
					for i := range valid {
						valid[i] = rng.Float64() < 0.7
					}
				}
				name := fmt.Sprintf("K=%d scale=%g rep=%d", s.k, scale, r)
				checkAuto(t, name, z, valid, -1)
				z32 := make([]float32, s.k)
				for i := range z {
					z32[i] = float32(z[i])
				}
				checkAuto(t, name+" float32", z32, valid, -1)
				rows++
			}
		}
	}
	if rows < 5000 {
		t.Fatalf("only %d rows checked", rows)
	}
}

// The Auto path allocates nothing, at the grid size too.
func TestAutoNoAllocs(t *testing.T) {
	rng := newRNG(22)
	const k = 15625
	z := make([]float32, k)
	for i := range z {
		z[i] = float32(rng.NormFloat64())
	}
	valid := make([]bool, k)
	for i := range valid {
		valid[i] = i%5 != 0
	}
	p := make([]float32, k)
	scratch := make([]float32, k)
	for name, f := range map[string]func(){
		"Sparsemax":        func() { Sparsemax(p, z, nil) },
		"Sparsemax masked": func() { Sparsemax(p, z, valid) },
		"Entmax 2":         func() { Entmax(p, z, nil, 2) },
		"Spmax":            func() { Spmax(z, nil, scratch) },
		"Threshold":        func() { SparsemaxThreshold(Auto, z, nil, scratch) },
	} {
		if a := testing.AllocsPerRun(20, f); a != 0 {
			t.Fatalf("%s allocates %v times per row", name, a)
		}
	}
}

// Rows longer than a float32 can index exactly (2^24) take the gather path.
func TestAutoBeyondIndexLimit(t *testing.T) {
	if testing.Short() {
		t.Skip("128 MB of rows")
	}
	k := 1<<24 + 3
	z := make([]float32, k)
	z[0], z[k-1] = 1, 0.8
	p := make([]float32, k)
	tau, s := Sparsemax(p, z, nil)
	if s != 2 || math.Abs(tau-0.4) > 1e-7 || math.Abs(float64(p[0])-0.6) > 1e-7 || math.Abs(float64(p[k-1])-0.4) > 1e-7 {
		t.Fatalf("tau,k = %v,%d; p[0], p[last] = %v, %v; want 0.4,2; 0.6, 0.4", tau, s, p[0], p[k-1])
	}
	if v := Spmax(z, nil, p); math.Abs(v-(1+0.6*(0-0.3)+0.4*(-0.2-0.2)+0.5)) > 1e-7 {
		t.Fatalf("spmax = %v", v)
	}
}

// Every algorithm counts only strictly positive probabilities when entries
// sit exactly at the threshold.
func TestSupportExcludesTiesAtThreshold(t *testing.T) {
	for _, z := range [][]float64{
		{-0.25, 0.25, 0.25, 0, 0, 0.25, -0.25, 0.25}, // tau = 0: the zeros
		{1, 0, 0, 0},         // tau = 0 = max - 1
		{0.5, 0.5, 0, 0, -3}, // tau = 0: the zeros
	} {
		_, _, want := sparsemaxF64(z)
		for _, alg := range allAlgorithms {
			p := make([]float64, len(z))
			_, k := SparsemaxWith(alg, p, z, nil)
			pos := 0
			for _, v := range p {
				if v > 0 {
					pos++
				}
			}
			if k != want || k != pos {
				t.Fatalf("%v %s: support %d, sort %d, positive entries %d", z, alg, k, want, pos)
			}
		}
	}
}

// An entry one ulp above max - 1 is a candidate (the bound sits below
// max - 1 by a margin larger than the rounding of max - 1).
func TestCandidatesKeepOneUlpAbove(t *testing.T) {
	for _, m := range []float64{0, 1, -1, 0.3, 3.7, -2.5, 1e3, 1e7, -1e7} {
		z32 := []float32{float32(m), math.Nextafter32(float32(m)-1, float32(m)), float32(m) - 3}
		if float64(z32[1])-float64(z32[0]) > -1 {
			buf := make([]float32, 3)
			if n, _, _ := candidates(buf, z32, nil); n < 2 || buf[1] != 1 {
				t.Fatalf("float32 max %v: candidates %v of %v", m, buf[:n], z32)
			}
		}
		z64 := []float64{m, math.Nextafter(m-1, m), m - 3}
		if z64[1]-z64[0] > -1 {
			buf := make([]float64, 3)
			if n, _, _ := candidates(buf, z64, nil); n < 2 || buf[1] != 1 {
				t.Fatalf("float64 max %v: candidates %v of %v", m, buf[:n], z64)
			}
		}
	}
}
