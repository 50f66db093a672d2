package train

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/sparsepcl/sparsepcl/agent/config"
	"github.com/sparsepcl/sparsepcl/agent/tensor"
	"github.com/sparsepcl/sparsepcl/envs"
	"github.com/sparsepcl/sparsepcl/envs/registry"
)

// One regime, session, runs both families with four replay steps per iteration: the LSTM's
// whole episodes (with replay) and the MLP's long-episode segments; each family only adds its
// member.
func TestOneRegimeForBothFamilies(t *testing.T) {
	lstmCfg := smallCopyConfig(config.AlgoSparse, 0.05)
	lstmCfg.Replay, lstmCfg.Iters, lstmCfg.EvalEvery, lstmCfg.StopAtThreshold = true, 3, 2, false
	mlpCfg := replayRatioConfig()
	mlpCfg.Iters, mlpCfg.EvalEvery, mlpCfg.EvalEpisodes = 3, 2, 1
	for _, tc := range []struct {
		name string
		cfg  config.Config
		is   func(regime) bool
	}{
		{"lstm", lstmCfg, func(r regime) bool { _, ok := r.(*session[int32]); return ok }},
		{"mlp", mlpCfg, func(r regime) bool { _, ok := r.(*session[float32]); return ok }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := tc.cfg
			cfg.TrainSteps = 4
			opts := Options{Dir: t.TempDir(), Registry: registry.Default(), Engine: tensor.GonumEngine()}
			reg, err := FamilyOf(cfg).newRegime(context.Background(), ResolveNet(cfg), opts)
			if err != nil {
				t.Fatal(err)
			}
			ok := tc.is(reg)
			if err := reg.Close(); err != nil {
				t.Error(err)
			}
			if !ok {
				t.Fatalf("the %s family's regime is a %T, not the one session", tc.name, reg)
			}
			sum, err := Run(context.Background(), cfg, opts)
			if err != nil {
				t.Fatal(err)
			}
			if len(sum.Rows) != 3 || sum.Rows[2].EnvSteps <= 0 {
				t.Errorf("%d rows, env steps %v: want 3 rows that counted their env steps", len(sum.Rows), sum.Rows)
			}
		})
	}
}

// failingClose is a maker whose envs are the registry's, except that Close fails, as a bridge
// env's does when its server has died under it.
type failingClose struct{ RegistryEnvs }

type closeFails struct{ envs.VecEnv }

var errServerGone = errors.New("the env server is gone")

func (closeFails) Close() error { return errServerGone }

func (m failingClose) MakeVec(ctx context.Context, cfg config.Config, n int) (envs.VecEnv, error) {
	env, err := m.RegistryEnvs.MakeVec(ctx, cfg, n)
	if err != nil {
		return nil, err
	}
	return closeFails{env}, nil
}

// An env that fails to close is reported by Run, for both families, after the run's files are
// written: the training is kept and the failure is not swallowed.
func TestRunReportsCloseError(t *testing.T) {
	lstmCfg := smallCopyConfig(config.AlgoSparse, 0.05)
	lstmCfg.Iters, lstmCfg.EvalEvery, lstmCfg.StopAtThreshold = 2, 1, false
	mlpCfg := replayRatioConfig()
	mlpCfg.Iters, mlpCfg.EvalEvery, mlpCfg.EvalEpisodes = 2, 1, 1
	for name, cfg := range map[string]config.Config{"lstm": lstmCfg, "mlp": mlpCfg} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			opts := Options{Dir: dir, Registry: registry.Default(), Engine: tensor.GonumEngine(),
				Envs: failingClose{RegistryEnvs{Registry: registry.Default()}}}
			_, err := Run(context.Background(), cfg, opts)
			if !errors.Is(err, errServerGone) {
				t.Fatalf("Run returned %v, want the envs' Close error", err)
			}
			for _, f := range []string{"config.json", "metrics.csv", "checkpoint.bin"} {
				if _, serr := os.Stat(filepath.Join(dir, f)); serr != nil {
					t.Errorf("%s was not kept: %v", f, serr)
				}
			}
		})
	}
}
