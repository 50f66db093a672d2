package train

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"math"
	"path/filepath"

	"github.com/sparsepcl/sparsepcl/agent/config"
	"github.com/sparsepcl/sparsepcl/agent/control"
	"github.com/sparsepcl/sparsepcl/agent/nn"
	"github.com/sparsepcl/sparsepcl/agent/nn/checkpoint"
	"github.com/sparsepcl/sparsepcl/agent/pcl"
	"github.com/sparsepcl/sparsepcl/agent/replay"
	"github.com/sparsepcl/sparsepcl/agent/runstore"
	"github.com/sparsepcl/sparsepcl/agent/weight"
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

// writeCheckpoint writes the checkpoint of meta.Iteration through cp: params, and meta naming the
// replay file that saveReplay (nil: none) writes.
func writeCheckpoint(cp *runstore.Checkpoints, meta Meta, params []*nn.Param, saveReplay func(path string) error) error {
	return cp.Write(meta.Iteration, params, saveReplay, func(replayFile string) ([]byte, error) {
		meta.ReplayFile = replayFile
		return json.Marshal(meta)
	})
}

// saver writes the checkpoints of a whole-episode run.
type saver struct {
	cp      *runstore.Checkpoints
	learner *pcl.EpisodeLearner
	env     envs.VecEnv
	buf     *replay.Buffer

	// The training curriculum as it was after the last completed iteration: a sample interrupted
	// in mid-iteration has already reset the env (recording shortfalls), so save must not read it.
	trainCur *algorithmic.VecCurriculumState
}

// mark records the training env's curriculum as that of the current completed iteration.
func (s *saver) mark() { s.trainCur = curriculumState(s.env) }

// save writes the checkpoint of meta.Iteration with the replay buffer and the marked curriculum.
func (s *saver) save(meta Meta) error {
	meta.TrainCurriculum = s.trainCur
	var saveReplay func(string) error
	if s.buf != nil {
		saveReplay = s.buf.SaveFile
	}
	params := append(append([]*nn.Param(nil), s.learner.Params()...), s.learner.Opt.StateParams()...)
	return writeCheckpoint(s.cp, meta, params, saveReplay)
}

// restoreFunc puts a checkpoint (its file and decoded metadata) into a run's learner, env and
// replay, all or nothing as far as the run goes on: when it fails on the newest checkpoint, the
// fallback's restore overwrites every piece.
type restoreFunc func(path string, f *checkpoint.File, meta Meta) error

// resumeCheckpoints restores the newest checkpoint of dir, or, when it or its replay file is
// damaged, the fallback (runstore.Dir.ResumeCheckpoints), and returns the restored checkpoint's
// metadata with the run's checkpoint state.
func resumeCheckpoints(dir runstore.Dir, log *slog.Logger, restore restoreFunc) (Meta, *runstore.Checkpoints, error) {
	var meta Meta
	cp, err := dir.ResumeCheckpoints(log, func(path string) (runstore.Restored, error) {
		m, err := restoreFile(path, restore)
		if err != nil {
			return runstore.Restored{}, err
		}
		meta = m
		return runstore.Restored{Iteration: m.Iteration, ReplayFile: m.ReplayFile}, nil
	})
	if err != nil {
		return Meta{}, nil, err
	}
	return meta, cp, nil
}

// restoreFile reads the checkpoint at path, checks its metadata and restores it.
func restoreFile(path string, restore restoreFunc) (Meta, error) {
	f, meta, err := readCheckpoint(path)
	if err != nil {
		return Meta{}, err
	}
	if meta.Iteration < 0 {
		return Meta{}, fmt.Errorf("checkpoint %s claims %d iterations: damaged metadata", path, meta.Iteration)
	}
	if err := restore(path, f, meta); err != nil {
		return Meta{}, err
	}
	return meta, nil
}

// replayPath is the replay file a checkpoint at ckpt names, in the checkpoint's directory, with an
// error when it names none.
func replayPath(ckpt string, meta Meta) (string, error) {
	if meta.ReplayFile == "" {
		return "", fmt.Errorf("checkpoint %s names no replay file", ckpt)
	}
	return filepath.Join(filepath.Dir(ckpt), filepath.Base(meta.ReplayFile)), nil
}

// LoadCheckpoint restores a learner from a run directory's checkpoint (parameters and optimizer
// state) and returns its metadata. The learner must have been built from the same config.
func LoadCheckpoint(dir string, l *pcl.EpisodeLearner) (Meta, error) {
	path := runstore.Dir(dir).File(runstore.CheckpointFile)
	f, meta, err := readCheckpoint(path)
	if err != nil {
		return Meta{}, err
	}
	params := append(append([]*nn.Param(nil), l.Params()...), l.Opt.StateParams()...)
	if err := f.Apply(params); err != nil {
		return Meta{}, fmt.Errorf("checkpoint %s does not match the run's network: %w", path, err)
	}
	return meta, nil
}

// ReadMeta returns the metadata of dir's checkpoint (the file is verified whole).
func ReadMeta(dir string) (Meta, error) {
	_, meta, err := readCheckpoint(runstore.Dir(dir).File(runstore.CheckpointFile))
	return meta, err
}

// readCheckpoint reads and verifies the checkpoint at path and decodes its metadata. Its errors
// name path once ("checkpoint <path>: ...").
func readCheckpoint(path string) (*checkpoint.File, Meta, error) {
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

// LoadReplay returns the replay buffer of dir's checkpoint (an lstm run with replay), built from
// the run's config.json, so that its sampling distribution is the one the run draws from.
func LoadReplay(dir string) (*replay.Buffer, Meta, error) {
	cfg, err := runstore.Dir(dir).Config()
	if err != nil {
		return nil, Meta{}, err
	}
	if !cfg.Replay {
		return nil, Meta{}, fmt.Errorf("run %s has no replay", dir)
	}
	path := runstore.Dir(dir).File(runstore.CheckpointFile)
	_, meta, err := readCheckpoint(path)
	if err != nil {
		return nil, Meta{}, err
	}
	rp, err := replayPath(path, meta)
	if err != nil {
		return nil, Meta{}, err
	}
	buf, err := replay.New(cfg.ReplayCapacity, cfg.ReplayAlpha, cfg.ReplayUniform, cfg.ReplayEviction)
	if err != nil {
		return nil, Meta{}, err
	}
	if err := buf.LoadFile(rp); err != nil {
		return nil, Meta{}, err
	}
	return buf, meta, nil
}
