package main

import (
	"errors"

	"github.com/sparsepcl/sparsepcl/agent/train"
	"github.com/sparsepcl/sparsepcl/internal/envmaker"
)

// hint is what a user can do about err, in terms of this repository's commands ("" when nothing
// specific): the libraries' errors name causes, not commands.
func hint(err error) string {
	if ue := (*train.UnsupportedError)(nil); errors.As(err, &ue) {
		return unsupportedHints[ue.Tool]
	}
	switch {
	case errors.Is(err, envmaker.ErrNoPython):
		return "install the env server's Python environment with `bash scripts/setup` (or point SPARSEPCL_PYTHON at a Python that has requirements.txt installed)"
	}
	return ""
}

// unsupportedHints say what to use instead of a tool the run's network family does not have.
var unsupportedHints = map[train.Tool]string{
	train.ToolDiagnose:  "diagnose probes the lstm learner of the algorithmic tasks; train a long-episode run with pcl train, whose log splits the time and whose metrics hold the value diagnostics",
	train.ToolCompare:   "compare sweeps the bases of the algorithmic tasks; run a long-episode env's seeds with pcl train (scripts/halfcheetah does it for HalfCheetah) and gather them with pcl report",
	train.ToolPlay:      "play steps an algorithmic task's tape; pcl eval --record draws one episode of a long-episode run as a GIF",
	train.ToolPerLength: "--per-length evaluates the algorithmic tasks' curriculum levels; a long-episode run has none: pcl eval reports its greedy returns",
	train.ToolRecord:    "--record draws long-episode (mlp) runs; watch an algorithmic task with pcl play --run",
	train.ToolObserver:  "an Observer watches the lstm family's batches of episodes",
	train.ToolOverlap:   "--overlap steps long episodes' envs while the learner trains; an algorithmic task's episodes are sampled by the policy that trains on them",
	train.ToolReturns:   "--returns writes a long-episode run's greedy returns; an algorithmic task's evaluation is its greedy reward at each curriculum level, which pcl eval prints",
}
