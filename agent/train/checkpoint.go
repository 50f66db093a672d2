package train

import (
	"github.com/sparsepcl/sparsepcl/agent/model/lstm"
	"github.com/sparsepcl/sparsepcl/agent/nn"
	"github.com/sparsepcl/sparsepcl/agent/pcl"
	"github.com/sparsepcl/sparsepcl/agent/runstore"
)

// checkpointParams are what a learner's checkpoint holds, of either family: its parameters, then
// its state (pcl.Learner.StateParams: the optimiser's, the network's, the lagged network's).
func checkpointParams[T any, N pcl.Network[T]](l *pcl.Learner[T, N]) []*nn.Param {
	return append(append([]*nn.Param(nil), l.Params()...), l.StateParams()...)
}

// LoadCheckpoint restores an lstm learner from the checkpoint of the run in dir (parameters and
// optimizer state) and returns its metadata. The learner must have been built from the same config.
func LoadCheckpoint(dir string, l *lstm.Learner) (runstore.Meta, error) {
	return runstore.Dir(dir).LoadCheckpoint(checkpointParams(l))
}
