package train

import (
	"github.com/sparsepcl/sparsepcl/agent/config"
	"github.com/sparsepcl/sparsepcl/agent/runstore"
)

// RunPlots is what Options.Plot draws a run's figures from.
type RunPlots struct {
	Dir     string         // the run directory, where the figures go
	Config  config.Config  // the run's config, for the titles
	Actions int            // the run's number of actions |A|
	Rows    []runstore.Row // every metrics row so far
	// EnvSteps: the rows are a long-episode run's, drawn against its env steps; otherwise against
	// its iterations.
	EnvSteps bool
}
