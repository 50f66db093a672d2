package runstore

import (
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"

	"github.com/sparsepcl/sparsepcl/agent/collect"
	"github.com/sparsepcl/sparsepcl/agent/config"
	"github.com/sparsepcl/sparsepcl/agent/episode"
	"github.com/sparsepcl/sparsepcl/agent/nn"
	"github.com/sparsepcl/sparsepcl/agent/nn/checkpoint"
	"github.com/sparsepcl/sparsepcl/agent/replay"
	"github.com/sparsepcl/sparsepcl/agent/weight"
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
	// and removes, after, those that neither it nor the fallback checkpoint names, so a crash never
	// pairs a checkpoint with another's buffer.
	ReplayFile string `json:"replay_file,omitempty"`
	// Steps is the state of a long-episode (net mlp) run beyond its parameters and replay.
	Steps *StepsState `json:"steps,omitempty"`
	// AutoAlpha is the automatic weight's state after this iteration (nil for a fixed or
	// scheduled weight, which the config and the iteration determine).
	AutoAlpha *weight.AutoState `json:"auto_alpha,omitempty"`
}

// StepsState is what a long-episode run's checkpoint holds besides parameters and replay.
type StepsState struct {
	// Window is the on-policy statistics window (the last 1000 steps' max-probability and support).
	Window collect.WindowState `json:"window"`
	// MidEpisode is the number of copies that were in the middle of an episode at the checkpoint.
	// They cannot be restored (the env's state is not saved), so a resumed run restarts them, and
	// it continues exactly only when this is 0.
	MidEpisode int `json:"mid_episode"`
	// LastMeanReturn is the metrics' carried mean return of completed episodes (NaN: none yet).
	LastMeanReturn JSONFloat `json:"last_mean_return"`
	// Time spent in the env (transport included), in computing actions, and in training steps.
	EnvSeconds    float64 `json:"env_seconds"`
	PolicySeconds float64 `json:"policy_seconds"`
	TrainSeconds  float64 `json:"train_seconds"`
	EvalSeconds   float64 `json:"eval_seconds"`
	Episodes      int64   `json:"episodes"`
}

// JSONFloat is a float64 that encodes NaN (and infinities) as null, which JSON cannot hold.
type JSONFloat float64

func (f JSONFloat) MarshalJSON() ([]byte, error) {
	if math.IsNaN(float64(f)) || math.IsInf(float64(f), 0) {
		return []byte("null"), nil
	}
	return json.Marshal(float64(f))
}

func (f *JSONFloat) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*f = JSONFloat(math.NaN())
		return nil
	}
	var v float64
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*f = JSONFloat(v)
	return nil
}

// replayPath is the replay file a checkpoint at ckpt names, in the checkpoint's directory, with an
// error when it names none.
func replayPath(ckpt string, meta Meta) (string, error) {
	if meta.ReplayFile == "" {
		return "", fmt.Errorf("checkpoint %s names no replay file", ckpt)
	}
	return filepath.Join(filepath.Dir(ckpt), filepath.Base(meta.ReplayFile)), nil
}

// ReplayPath is the replay file that the checkpoint at ckpt, with metadata meta, names (an error
// when it names none).
func ReplayPath(ckpt string, meta Meta) (string, error) { return replayPath(ckpt, meta) }

// LoadCheckpoint restores params (a learner's parameters and optimizer state, in the order it
// saves them) from the run's checkpoint and returns its metadata. The learner must have been built
// from the same config.
func (d Dir) LoadCheckpoint(params []*nn.Param) (Meta, error) {
	path := d.File(CheckpointFile)
	f, meta, err := ReadCheckpoint(path)
	if err != nil {
		return Meta{}, err
	}
	if err := f.Apply(params); err != nil {
		return Meta{}, fmt.Errorf("checkpoint %s does not match the run's network: %w", path, err)
	}
	return meta, nil
}

// Meta returns the metadata of the run's checkpoint (the file is verified whole).
func (d Dir) Meta() (Meta, error) {
	_, meta, err := ReadCheckpoint(d.File(CheckpointFile))
	return meta, err
}

// ReadCheckpoint reads and verifies the checkpoint at path and decodes its metadata. Its errors
// name path once ("checkpoint <path>: ...").
func ReadCheckpoint(path string) (*checkpoint.File, Meta, error) {
	f, err := checkpoint.Load(path)
	if err != nil {
		return nil, Meta{}, err
	}
	var meta Meta
	if err := json.Unmarshal(f.Meta, &meta); err != nil {
		return nil, Meta{}, fmt.Errorf("checkpoint %s: metadata: %w", path, err)
	}
	return f, meta, nil
}

// Replay returns the replay buffer of the run's checkpoint (an lstm run with replay), built from
// the run's config.json, so that its sampling distribution is the one the run draws from.
func (d Dir) Replay() (*replay.Buffer[int32], Meta, error) {
	cfg, err := d.Config()
	if err != nil {
		return nil, Meta{}, err
	}
	if !cfg.Replay {
		return nil, Meta{}, fmt.Errorf("run %s has no replay", d)
	}
	path := d.File(CheckpointFile)
	_, meta, err := ReadCheckpoint(path)
	if err != nil {
		return nil, Meta{}, err
	}
	rp, err := replayPath(path, meta)
	if err != nil {
		return nil, Meta{}, err
	}
	buf, err := replay.NewEpisodes(cfg.ReplayCapacity, cfg.ReplayAlpha, cfg.ReplayUniform, string(cfg.ReplayEviction))
	if err != nil {
		return nil, Meta{}, err
	}
	if err := buf.LoadFile(rp, episode.TokenDim); err != nil {
		return nil, Meta{}, err
	}
	return buf, meta, nil
}

// TrainedLevel is the curriculum level (min_length) the checkpoint's training had reached: the
// shared curriculum's, or the lowest copy's with a per-copy curriculum. ok is false for envs
// without a curriculum.
func (m Meta) TrainedLevel() (level int, ok bool) {
	if m.TrainCurriculum == nil || len(m.TrainCurriculum.Curricula) == 0 {
		return 0, false
	}
	level = m.TrainCurriculum.Curricula[0].MinLength
	for _, c := range m.TrainCurriculum.Curricula[1:] {
		level = min(level, c.MinLength)
	}
	return level, true
}
