package train

import (
	"github.com/sparsepcl/sparsepcl/agent/model/lstm"
	"github.com/sparsepcl/sparsepcl/agent/nn"
	"github.com/sparsepcl/sparsepcl/agent/pcl"
	"github.com/sparsepcl/sparsepcl/agent/replay"
	"github.com/sparsepcl/sparsepcl/agent/runstore"
	"github.com/sparsepcl/sparsepcl/envs"
	"github.com/sparsepcl/sparsepcl/envs/algorithmic"
)

// saver writes the checkpoints of a whole-episode run.
type saver struct {
	cp      *runstore.Checkpoints
	learner *lstm.Learner
	env     envs.VecEnv
	buf     *replay.Buffer[int32]

	// The training curriculum as it was after the last completed iteration: a sample interrupted
	// in mid-iteration has already reset the env (recording shortfalls), so save must not read it.
	trainCur *algorithmic.VecCurriculumState
}

// mark records the training env's curriculum as that of the current completed iteration.
func (s *saver) mark() { s.trainCur = algorithmic.SnapshotCurriculum(s.env) }

// save writes the checkpoint of meta.Iteration with the replay buffer and the marked curriculum.
func (s *saver) save(meta runstore.Meta) error {
	meta.TrainCurriculum = s.trainCur
	var saveReplay func(string) error
	if s.buf != nil {
		saveReplay = s.buf.SaveFile
	}
	params := checkpointParams(s.learner)
	return s.cp.Write(meta, params, saveReplay)
}

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
