package lstm

import (
	"github.com/sparsepcl/sparsepcl/agent/config"
	"github.com/sparsepcl/sparsepcl/agent/episode"
	"github.com/sparsepcl/sparsepcl/agent/pcl"
	"github.com/sparsepcl/sparsepcl/agent/tensor"
)

// Learner is the PCL learner (pcl.Learner) over the LSTM, trained on batches of whole episodes.
type Learner = pcl.Learner[*episode.Episode, *Model]

// NewLearner builds the model on the task spec and its learner for cfg (which must be valid).
func NewLearner(cfg config.Config, spec Spec, eng *tensor.Engine) (*Learner, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	m, err := New(cfg, spec, eng)
	if err != nil {
		return nil, err
	}
	return pcl.NewLearnerOf[*episode.Episode](cfg, m)
}
