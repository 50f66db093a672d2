package train

import (
	"fmt"
	"math"
	"strconv"

	"github.com/sparsepcl/sparsepcl/agent/progress"
	"github.com/sparsepcl/sparsepcl/agent/runstore"
)

// Verdict says in one line whether a run solved its task, by the greedy evaluations in rows
// against threshold (the config's reward_threshold): "solved at iteration N (greedy R ≥ threshold
// T)", or "not solved in N iterations: best greedy R at iteration M (threshold T)". Iterations are
// numbered as in metrics.csv; iterations is the number the run has done.
//
// A NaN threshold means the env registers none: "no threshold: best greedy R at iteration M in N
// iterations".
func Verdict(rows []runstore.Row, iterations int, threshold float64) string {
	th := strconv.FormatFloat(threshold, 'f', -1, 64)
	if math.IsNaN(threshold) {
		best, at := bestGreedy(rows)
		if at < 0 {
			return fmt.Sprintf("no threshold: no greedy evaluation ran in %d iterations", iterations)
		}
		return fmt.Sprintf("no threshold: best greedy %s at iteration %d in %d iterations", progress.Fixed2(best), at, iterations)
	}
	if r, ok := runstore.FirstReach(rows, threshold); ok {
		return fmt.Sprintf("solved at iteration %d (greedy %s ≥ threshold %s)", r.Iteration, progress.Fixed2(r.GreedyReward), th)
	}
	best, at := bestGreedy(rows)
	if at < 0 {
		return fmt.Sprintf("not solved in %d iterations: no greedy evaluation ran (threshold %s)", iterations, th)
	}
	return fmt.Sprintf("not solved in %d iterations: best greedy %s at iteration %d (threshold %s)", iterations, progress.Fixed2(best), at, th)
}

// bestGreedy is the best greedy reward in rows and its iteration (-1 when none was evaluated).
func bestGreedy(rows []runstore.Row) (float64, int) {
	best, at := math.Inf(-1), -1
	for _, r := range rows {
		if !math.IsNaN(r.GreedyReward) && r.GreedyReward > best {
			best, at = r.GreedyReward, r.Iteration
		}
	}
	return best, at
}
