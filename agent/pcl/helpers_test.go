package pcl

import "github.com/sparsepcl/sparsepcl/agent/config"

// testConfig is a small network's config for algo and form: 8 hidden units, a 3-step path, γ 0.9.
func testConfig(algo config.Algo, form config.Form) config.Config {
	c := config.Default()
	c.Algo, c.Form, c.Hidden, c.Rollout, c.Gamma = algo, form, 8, 3, 0.9
	c.Alpha = 0.3
	c.TsallisQ = 1.5
	return c
}
