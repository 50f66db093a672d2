package analysis

import (
	"strings"
	"testing"

	"github.com/sparsepcl/sparsepcl/agent/config"
	"github.com/sparsepcl/sparsepcl/agent/runstore"
)

func TestCollapseSection(t *testing.T) {
	cfg := config.Default()
	cfg.Env, cfg.Net, cfg.Grid, cfg.Iters, cfg.RewardThreshold = "HalfCheetah-v5", config.NetMLP, 3, 1000, 4800
	// run returns rows that climb from -400 to 500 by iteration 90, then from onset on sit on one
	// action at after. The check's window is 50 iterations; it needs 45 of them on one action.
	run := func(dir string, onset int, after float64) Record {
		rows := make([]runstore.Row, cfg.Iters)
		for i := range rows {
			rows[i] = runstore.Row{Iteration: i, EnvSteps: int64(100 * (i + 1)), MeanReward: min(-400+10*float64(i), 500), MaxProb: 0.4, Support: 4}
			if i >= onset {
				rows[i].MeanReward, rows[i].MaxProb, rows[i].Support = after, 1, 1
			}
		}
		return Record{Dir: dir, Cfg: cfg, Rows: rows}
	}
	md, err := CollapseSection([]Record{
		run("healthy", cfg.Iters, 0),
		run("kept", 700, 480),
		run("lost", 700, -100),
		run("early", 10, -300),
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"## Collapse warnings",
		"- `healthy`: none\n",
		"- `kept`: none\n",
		"- `lost`: at iteration 744, the policy has been on one action since iteration 700",
		"having lost what it learned (a mean return of 500 up to iteration",
		"- `early`: at iteration 57, the policy has been on one action since iteration 10",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("section lacks %q:\n%s", want, md)
		}
	}
	if strings.Count(md, "having lost") != 1 {
		t.Errorf("only the lost run lost what it learned:\n%s", md)
	}
}
