package success

import (
	"math"
	"testing"

	"github.com/sparsepcl/sparsepcl/envs/algorithmic"
)

// TestMaxRewardMatchesEnv draws many resets of the real env at a curriculum level and compares the
// mean target length with MaxReward.
func TestMaxRewardMatchesEnv(t *testing.T) {
	cases := []struct {
		task  algorithmic.Task
		base  int
		level int
	}{
		{algorithmic.Copy, 5, 2},
		{algorithmic.Copy, 40, 17},
		{algorithmic.DuplicatedInput, 5, 2},
		{algorithmic.DuplicatedInput, 20, 30},
		{algorithmic.RepeatCopy, 10, 4},
		{algorithmic.Reverse, 4, 1},
		{algorithmic.ReversedAddition, 3, 2},
		{algorithmic.ReversedAddition, 8, 9},
		{algorithmic.ReversedAddition3, 3, 5},
	}
	for _, c := range cases {
		env, err := algorithmic.NewEnv(algorithmic.Config{Task: c.task, Base: c.base})
		if err != nil {
			t.Fatal(err)
		}
		const n = 60000
		var sum, sum2 float64
		for i := range n {
			// Unplayed episodes record shortfalls too (DuplicatedInput's -1 at level 2 even
			// promotes), so the level is set before every reset.
			if err := env.Curriculum().Restore(algorithmic.CurriculumState{MinLength: c.level}); err != nil {
				t.Fatal(err)
			}
			seed := int64(i)
			if _, _, err := env.Reset(&seed, nil); err != nil {
				t.Fatal(err)
			}
			x := float64(env.TargetLength())
			sum += x
			sum2 += x * x
		}
		mean := sum / n
		se := math.Sqrt((sum2/n - mean*mean) / n)
		want := Task{Task: c.task, Base: c.base}.MaxReward(c.level)
		if math.Abs(mean-want) > 4*se+1e-9 {
			t.Errorf("%v base %d level %d: env mean target length %.4f ± %.4f, MaxReward %.4f", c.task, c.base, c.level, mean, se, want)
		}
	}
}

// TestCarryOutBruteForce enumerates every input of small additions.
func TestCarryOutBruteForce(t *testing.T) {
	for _, c := range []struct{ base, rows, n int }{{2, 2, 1}, {3, 2, 3}, {5, 2, 2}, {3, 3, 3}, {2, 3, 4}} {
		digits := c.rows * c.n
		total, carried := 0, 0
		idx := make([]int, digits)
		for {
			carry := 0
			for col := range c.n {
				s := carry
				for r := range c.rows {
					s += idx[col*c.rows+r]
				}
				carry = s / c.base
			}
			total++
			if carry > 0 {
				carried++
			}
			k := 0
			for k < digits {
				idx[k]++
				if idx[k] < c.base {
					break
				}
				idx[k] = 0
				k++
			}
			if k == digits {
				break
			}
		}
		want := float64(carried) / float64(total)
		if got := carryOut(c.base, c.rows, c.n); math.Abs(got-want) > 1e-12 {
			t.Errorf("carryOut(%d, %d, %d) = %v, enumeration %v", c.base, c.rows, c.n, got, want)
		}
	}
}

func TestThresholds(t *testing.T) {
	cases := []struct {
		env       string
		base      int
		threshold float64
		topMax    float64 // maximum reward at the top of the curriculum
	}{
		{"Copy-v0", 40, 25, 31},
		{"DuplicatedInput-v0", 5, 9, 46.0 / 3}, // targets of 15, 15, 16
		{"RepeatCopy-v0", 5, 75, 93},
		{"Reverse-v0", 2, 25, 31},
	}
	for _, c := range cases {
		task, ok, err := ForEnv(c.env, c.base)
		if !ok || err != nil {
			t.Fatalf("%s: ok %v err %v", c.env, ok, err)
		}
		if task.Threshold() != c.threshold {
			t.Errorf("%s: threshold %v, want %v", c.env, task.Threshold(), c.threshold)
		}
		if got := task.MaxReward(task.TopLevel()); math.Abs(got-c.topMax) > 1e-12 {
			t.Errorf("%s: top max reward %v, want %v", c.env, got, c.topMax)
		}
		if task.ThresholdFraction() >= 1 {
			t.Errorf("%s: threshold %v is not reachable (top max %v)", c.env, task.Threshold(), c.topMax)
		}
		// A perfect run at the starting level has not solved the task, but has at its level.
		start := c.env == "Reverse-v0"
		lvl := 2
		if start {
			lvl = 1
		}
		perfect := task.MaxReward(lvl)
		if task.Solved(perfect) || !task.SolvedAtLevel(perfect, lvl) || task.Fraction(perfect, lvl) != 1 {
			t.Errorf("%s: perfect reward %v at level %d: solved %v, at level %v, fraction %v", c.env, perfect, lvl,
				task.Solved(perfect), task.SolvedAtLevel(perfect, lvl), task.Fraction(perfect, lvl))
		}
		if !task.Solved(c.threshold) || task.Solved(math.Nextafter(c.threshold, 0)) {
			t.Errorf("%s: the threshold is not the boundary of Solved", c.env)
		}
	}
	// ReversedAddition's top maximum: 31 columns on average plus the chance of a final carry.
	ra, _, _ := ForEnv("ReversedAddition-v0", 5)
	if got := ra.MaxReward(30); got <= 31 || got >= 32 {
		t.Errorf("ReversedAddition top max %v, want in (31, 32)", got)
	}
	if _, ok, _ := ForEnv("CartPole-v1", 2); ok {
		t.Error("CartPole-v1 resolved as an algorithmic task")
	}
	if _, ok, err := ForEnv("Copy-v0", 1); !ok || err == nil {
		t.Errorf("Copy-v0 base 1: ok %v err %v, want an error", ok, err)
	}
}
