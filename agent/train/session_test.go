package train

import (
	"context"
	"testing"

	"github.com/sparsepcl/sparsepcl/agent/config"
	"github.com/sparsepcl/sparsepcl/agent/tensor"
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
			reg.close()
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
