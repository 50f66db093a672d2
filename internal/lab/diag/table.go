package diag

import (
	"fmt"
	"io"
	"math"
	"slices"

	"gonum.org/v1/gonum/stat"
)

// Lever summarises the probes of one lever (one per seed) by the early-collapse measures: where
// writing stands at an early iteration, then the state over the last few inspections.
type Lever struct {
	Name  string
	Seeds int
	Iters int // iterations of the shortest probe (its last inspected iteration + 1)
	// At the early iteration (EarlyIteration), the mean over seeds of the fraction of taken
	// actions that write where a symbol is due, and of how often the correct write is in the
	// sparsemax support there.
	WriteEarly, CorrectInSupportEarly float64
	// Over the last LastInspections inspections of each seed, then over seeds: the sampled
	// reward (mean and population std over seeds), the taken write fraction, the policy's own
	// probability of writing, p(correct | write), the symbols in the support at least half the
	// time, and the support size.
	Reward, RewardStd, Write, PWrite, PCorrectGivenWrite, Symbols, Support float64
}

const (
	// EarlyIteration is the iteration of the "@30" columns: by then the early collapse of writing
	// has happened at |A| = 160 (docs/results/copy-base40-diagnosis.md).
	EarlyIteration = 30
	// LastInspections is how many of the last inspections the final columns average.
	LastInspections = 5
)

// SummariseLever reduces the probes of one lever, one Table per seed. NaN entries (p(correct |
// write) where nothing was written) are left out of their means; a column with none left is NaN.
func SummariseLever(name string, seeds []Table) (Lever, error) {
	if len(seeds) == 0 {
		return Lever{}, fmt.Errorf("diag: lever %s has no probes", name)
	}
	l := Lever{Name: name, Seeds: len(seeds), Iters: math.MaxInt}
	var early, support, rewards, write, pwrite, pcorrect, symbols, size []float64
	for i, t := range seeds {
		its := t["iteration"]
		if len(its) == 0 {
			return Lever{}, fmt.Errorf("diag: lever %s, probe %d: no inspected iteration", name, i+1)
		}
		for _, col := range []string{"write_frac", "correct_in_support", "mean_reward", "p_write", "p_correct_given_write", "symbols_in_support", "support"} {
			if len(t[col]) != len(its) {
				return Lever{}, fmt.Errorf("diag: lever %s, probe %d: column %s has %d values for %d iterations", name, i+1, col, len(t[col]), len(its))
			}
		}
		l.Iters = min(l.Iters, int(its[len(its)-1])+1)
		j := slices.Index(its, EarlyIteration)
		if j < 0 {
			return Lever{}, fmt.Errorf("diag: lever %s, probe %d: iteration %d was not inspected", name, i+1, EarlyIteration)
		}
		early, support = append(early, t["write_frac"][j]), append(support, t["correct_in_support"][j])
		from := max(len(its)-LastInspections, 0)
		tail := func(col string) float64 { return finiteMean(t[col][from:]) }
		rewards = append(rewards, tail("mean_reward"))
		write, pwrite = append(write, tail("write_frac")), append(pwrite, tail("p_write"))
		pcorrect = append(pcorrect, tail("p_correct_given_write"))
		symbols, size = append(symbols, tail("symbols_in_support")), append(size, tail("support"))
	}
	l.WriteEarly, l.CorrectInSupportEarly = finiteMean(early), finiteMean(support)
	l.Reward = finiteMean(rewards)
	l.RewardStd = math.Sqrt(stat.MomentAbout(2, rewards, l.Reward, nil))
	l.Write, l.PWrite, l.PCorrectGivenWrite = finiteMean(write), finiteMean(pwrite), finiteMean(pcorrect)
	l.Symbols, l.Support = finiteMean(symbols), finiteMean(size)
	return l, nil
}

// finiteMean is the mean of the finite values of xs, NaN when there are none.
func finiteMean(xs []float64) float64 {
	sum, n := 0.0, 0
	for _, x := range xs {
		if !math.IsNaN(x) && !math.IsInf(x, 0) {
			sum, n = sum+x, n+1
		}
	}
	if n == 0 {
		return math.NaN()
	}
	return sum / float64(n)
}

// WriteLeverTable writes levers as a markdown table, a row each in the order given.
func WriteLeverTable(w io.Writer, levers []Lever) error {
	num := func(x float64, digits int) string {
		if math.IsNaN(x) {
			return "–"
		}
		return fmt.Sprintf("%.*f", digits, x)
	}
	if _, err := fmt.Fprintf(w, "| lever | seeds | iters | write@%d | correct in support@%d | reward (last %d insp.) | write | p(write) | p(correct given write) | symbols in support | support |\n|---|---|---|---|---|---|---|---|---|---|---|\n",
		EarlyIteration, EarlyIteration, LastInspections); err != nil {
		return fmt.Errorf("diag: lever table: %w", err)
	}
	for _, l := range levers {
		if _, err := fmt.Fprintf(w, "| %s | %d | %d | %s | %s | %s ± %s | %s | %s | %s | %s | %s |\n", l.Name, l.Seeds, l.Iters,
			num(l.WriteEarly, 2), num(l.CorrectInSupportEarly, 2), num(l.Reward, 2), num(l.RewardStd, 2), num(l.Write, 2),
			num(l.PWrite, 2), num(l.PCorrectGivenWrite, 2), num(l.Symbols, 1), num(l.Support, 1)); err != nil {
			return fmt.Errorf("diag: lever table: %w", err)
		}
	}
	return nil
}
