package train

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/sparsepcl/sparsepcl/agent/config"
	"github.com/sparsepcl/sparsepcl/agent/control"
	"github.com/sparsepcl/sparsepcl/agent/nn"
	"github.com/sparsepcl/sparsepcl/agent/nn/checkpoint"
	"github.com/sparsepcl/sparsepcl/agent/pcl"
	"github.com/sparsepcl/sparsepcl/agent/replay"
	"github.com/sparsepcl/sparsepcl/envs"
	"github.com/sparsepcl/sparsepcl/envs/algorithmic"
)

// Meta is the checkpoint metadata: with the parameters, the Adam state and the replay file it
// names, everything a resumed run needs to continue exactly (batches are seeded per iteration).
type Meta struct {
	Config      config.Config `json:"config"`
	Iteration   int           `json:"iteration"` // iterations completed
	EnvSteps    int64         `json:"env_steps"`
	WallSeconds float64       `json:"wall_seconds"`
	// TrainCurriculum is the training env's curriculum (nil for envs without one, and in
	// checkpoints written before it was saved). The greedy-evaluation env needs none: it copies
	// the training curriculum before every evaluation. Checkpoints written before that carry an
	// "eval_curriculum" field too, which loading ignores.
	TrainCurriculum *algorithmic.VecCurriculumState `json:"train_curriculum,omitempty"`
	// ReplayFile names the replay buffer saved with this checkpoint, in the run dir ("" without
	// replay). Each checkpoint writes its own (replay-<iteration>.bin) before the checkpoint itself
	// and removes the older ones after, so a crash never pairs a checkpoint with another's buffer.
	ReplayFile string `json:"replay_file,omitempty"`
	// Steps is the state of a long-episode (net mlp) run beyond its parameters and replay.
	Steps *StepsState `json:"steps,omitempty"`
}

// StepsState is what a long-episode run's checkpoint holds besides parameters and replay.
type StepsState struct {
	// Window is the on-policy statistics window (the last 1000 steps' max-probability and support).
	Window control.WindowState `json:"window"`
	// MidEpisode is the number of copies that were in the middle of an episode at the checkpoint.
	// They cannot be restored (the env's state is not saved), so a resumed run restarts them, and
	// it continues exactly only when this is 0.
	MidEpisode int `json:"mid_episode"`
	// LastMeanReturn is the metrics' carried mean return of completed episodes (NaN: none yet).
	LastMeanReturn jsonFloat `json:"last_mean_return"`
	// Time spent in the env (transport included), in computing actions, and in training steps.
	EnvSeconds    float64 `json:"env_seconds"`
	PolicySeconds float64 `json:"policy_seconds"`
	TrainSeconds  float64 `json:"train_seconds"`
	EvalSeconds   float64 `json:"eval_seconds"`
	Episodes      int64   `json:"episodes"`
}

// jsonFloat is a float64 that encodes NaN as null.
type jsonFloat float64

func (f jsonFloat) MarshalJSON() ([]byte, error) {
	if math.IsNaN(float64(f)) || math.IsInf(float64(f), 0) {
		return []byte("null"), nil
	}
	return json.Marshal(float64(f))
}

func (f *jsonFloat) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*f = jsonFloat(math.NaN())
		return nil
	}
	var v float64
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*f = jsonFloat(v)
	return nil
}

// replayFileName is the replay file saved with the checkpoint of iteration it.
func replayFileName(it int) string { return fmt.Sprintf("replay-%08d.bin", it) }

// saver writes checkpoints of one run and remembers the last one written.
type saver struct {
	dir     string
	learner *pcl.Learner
	env     envs.VecEnv
	buf     *replay.Buffer
	last    int // iteration of the last checkpoint on disk, -1 for none

	// The training curriculum as it was after the last completed iteration: a sample interrupted
	// in mid-iteration has already reset the env (recording shortfalls), so save must not read it.
	trainCur *algorithmic.VecCurriculumState
}

// mark records the training env's curriculum as that of the current completed iteration.
func (s *saver) mark() { s.trainCur = curriculumState(s.env) }

// save writes the checkpoint of meta.Iteration: the replay buffer first, then the checkpoint (which
// names it), then removes older replay files. Each write is atomic.
func (s *saver) save(meta Meta) error {
	if s.last == meta.Iteration {
		return nil
	}
	meta.TrainCurriculum = s.trainCur
	if s.buf != nil {
		meta.ReplayFile = replayFileName(meta.Iteration)
		if err := s.buf.SaveFile(filepath.Join(s.dir, meta.ReplayFile)); err != nil {
			return fmt.Errorf("train: %w", err)
		}
	}
	b, err := json.Marshal(meta)
	if err != nil {
		return fmt.Errorf("train: encode checkpoint meta: %w", err)
	}
	params := append(append([]*nn.Param(nil), s.learner.Params()...), s.learner.Opt.StateParams()...)
	if err := checkpoint.Save(filepath.Join(s.dir, CheckpointFile), params, b); err != nil {
		return fmt.Errorf("train: %w", err)
	}
	s.last = meta.Iteration
	return removeStaleReplays(s.dir, meta.ReplayFile)
}

// removeStaleReplays deletes the run dir's replay files other than keep.
func removeStaleReplays(dir, keep string) error {
	old, err := filepath.Glob(filepath.Join(dir, "replay-*.bin"))
	if err != nil {
		return fmt.Errorf("train: %w", err)
	}
	for _, f := range old {
		if filepath.Base(f) == keep || !strings.HasPrefix(filepath.Base(f), "replay-") {
			continue
		}
		if err := os.Remove(f); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("train: remove old replay file: %w", err)
		}
	}
	return nil
}

// LoadCheckpoint restores a learner from a run directory's checkpoint (parameters and optimizer
// state) and returns its metadata. The learner must have been built from the same config.
func LoadCheckpoint(dir string, l *pcl.Learner) (Meta, error) {
	f, meta, err := loadCheckpoint(dir)
	if err != nil {
		return Meta{}, err
	}
	params := append(append([]*nn.Param(nil), l.Params()...), l.Opt.StateParams()...)
	if err := f.Apply(params); err != nil {
		return Meta{}, fmt.Errorf("train: checkpoint %s does not match the run's network: %w", filepath.Join(dir, CheckpointFile), err)
	}
	return meta, nil
}

// ReadMeta returns the metadata of dir's checkpoint (the file is verified whole).
func ReadMeta(dir string) (Meta, error) {
	_, meta, err := loadCheckpoint(dir)
	return meta, err
}

// loadCheckpoint reads and verifies dir's checkpoint and decodes its metadata.
func loadCheckpoint(dir string) (*checkpoint.File, Meta, error) {
	path := filepath.Join(dir, CheckpointFile)
	f, err := checkpoint.Load(path)
	if err != nil {
		return nil, Meta{}, fmt.Errorf("train: %w", err)
	}
	var meta Meta
	if err := json.Unmarshal(f.Meta, &meta); err != nil {
		return nil, Meta{}, fmt.Errorf("train: checkpoint %s metadata: %w", path, err)
	}
	return f, meta, nil
}

// HasCheckpoint reports whether dir holds a checkpoint file.
func HasCheckpoint(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, CheckpointFile))
	return err == nil
}
