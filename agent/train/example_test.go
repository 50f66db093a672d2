package train_test

import (
	"context"
	"fmt"

	"github.com/sparsepcl/sparsepcl/agent/config"
	"github.com/sparsepcl/sparsepcl/agent/train"
	"github.com/sparsepcl/sparsepcl/envs/registry"
)

// Train sparse PCL on Copy with |A| = 4*40 = 160 from Go: every hyperparameter starts at the paper's
// value in config.Default and can be overridden; the run directory gets config.json, metrics.csv,
// checkpoints, the replay buffer and plots, and Run resumes from it when Resume is set.
func ExampleRun() {
	cfg := config.Default()
	cfg.Env, cfg.Base, cfg.Algo, cfg.Alpha = "Copy-v0", 40, config.AlgoSparse, 0.05
	cfg.Iters = 1500
	sum, err := train.Run(context.Background(), cfg, train.Options{Dir: "runs/copy40-sparse", Registry: registry.Default()})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%d iterations, %.3f s/iteration, greedy reward %.2f\n", sum.Iterations, sum.SecondsPerIt, sum.LastGreedy)
}
