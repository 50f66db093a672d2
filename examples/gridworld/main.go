// Command gridworld is a user of sparsepcl as a library, outside its module: it defines an env,
// registers it, checks it against the contract the learner relies on, and trains sparse PCL on it
// until the greedy policy walks to the goal.
package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"

	"github.com/sparsepcl/sparsepcl/agent/config"
	"github.com/sparsepcl/sparsepcl/agent/train"
	"github.com/sparsepcl/sparsepcl/envs"
	"github.com/sparsepcl/sparsepcl/envs/envcheck"
)

func main() {
	if err := run(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, "gridworld:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context) error {
	reg := envs.NewRegistry()
	if err := Register(reg); err != nil {
		return err
	}
	report := envcheck.Check(ctx, "GridWorld-v0", func(_ context.Context, copies int, mode envs.AutoresetMode) (envs.VecEnv, error) {
		return reg.MakeRequest(envs.VecRequest{ID: "GridWorld-v0", Copies: copies, Autoreset: mode})
	}, envcheck.Options{})
	fmt.Print(report)
	if !report.OK() {
		return errors.New("GridWorld-v0 breaks the env contract")
	}

	cfg := config.Default() // the paper's settings for whole episodes: an LSTM, batch 400
	cfg.Env, cfg.Algo, cfg.Alpha = "GridWorld-v0", config.AlgoSparse, 0.05
	cfg.BatchSize, cfg.Iters, cfg.EvalEvery = 32, 300, 10
	cfg.RewardThreshold, cfg.StopAtThreshold = 1, true // the greedy walk reaches the goal
	sum, err := train.Run(ctx, cfg, train.Options{Registry: reg, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return err
	}
	verdict := train.Verdict(sum.Rows, sum.Iterations, cfg.RewardThreshold)
	fmt.Println(verdict)
	if sum.LastGreedy < cfg.RewardThreshold {
		return errors.New("not solved")
	}
	return nil
}
