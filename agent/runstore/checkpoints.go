package runstore

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"

	"github.com/sparsepcl/sparsepcl/agent/nn"
	"github.com/sparsepcl/sparsepcl/agent/nn/checkpoint"
	"github.com/sparsepcl/sparsepcl/internal/atomicfile"
)

// ReplayFileName is the replay file saved with the checkpoint of iteration it.
func ReplayFileName(it int) string { return fmt.Sprintf("replay-%08d.bin", it) }

// Checkpoints writes the checkpoints of one run and tracks which of the run dir's files are good:
// the newest checkpoint becomes the fallback only when this process wrote it or loaded it whole,
// so that a damaged one never replaces a good fallback.
type Checkpoints struct {
	dir        Dir
	last       int    // iteration of the newest good checkpoint on disk, -1 for none
	good       bool   // checkpoint.bin is good (written or loaded whole by this process)
	replay     string // the replay file checkpoint.bin names, when good
	prevReplay string // the replay file the fallback names
}

// NewCheckpoints is the checkpoint state of a new run: none on disk yet.
func (d Dir) NewCheckpoints() *Checkpoints { return &Checkpoints{dir: d, last: -1} }

// Last is the iteration of the newest good checkpoint on disk (-1: none).
func (c *Checkpoints) Last() int { return c.last }

// Dir is the run directory the checkpoints are written into.
func (c *Checkpoints) Dir() Dir { return c.dir }

// Write saves the checkpoint of iteration it (nothing when it is already on disk): the replay
// (saveReplay; nil without replay) into its own file first, then the newest checkpoint, when good,
// copied to the fallback, then the new checkpoint, with params and the metadata that meta encodes
// (naming the replay file, "" without one), and last the removal of replay files that neither
// checkpoint names. Each file is written atomically, so a crash at any point leaves a newest
// checkpoint whose replay file is whole.
func (c *Checkpoints) Write(it int, params []*nn.Param, saveReplay func(path string) error, meta func(replayFile string) ([]byte, error)) error {
	if c.last == it {
		return nil
	}
	replay := ""
	if saveReplay != nil {
		replay = ReplayFileName(it)
		if err := saveReplay(c.dir.File(replay)); err != nil {
			return fmt.Errorf("checkpoint of iteration %d: %w", it, err)
		}
	}
	b, err := meta(replay)
	if err != nil {
		return fmt.Errorf("checkpoint of iteration %d: encode metadata: %w", it, err)
	}
	path := c.dir.File(CheckpointFile)
	if c.good {
		data, err := os.ReadFile(path)
		if err != nil {
			return fmt.Errorf("keep the previous checkpoint as the fallback: %w", err)
		}
		if err := atomicfile.WriteFile(c.dir.File(FallbackFile), data, 0o644); err != nil {
			return fmt.Errorf("keep the previous checkpoint as the fallback: %w", err)
		}
		c.prevReplay = c.replay
	}
	if err := checkpoint.Save(path, params, b); err != nil {
		return fmt.Errorf("checkpoint of iteration %d: %w", it, err)
	}
	c.last, c.good, c.replay = it, true, replay
	return removeStaleReplays(c.dir, c.replay, c.prevReplay)
}

// removeStaleReplays deletes the run dir's replay files other than keep.
func removeStaleReplays(d Dir, keep ...string) error {
	old, err := filepath.Glob(d.File("replay-*.bin"))
	if err != nil {
		return fmt.Errorf("remove old replay files: %w", err)
	}
	for _, f := range old {
		if slices.Contains(keep, filepath.Base(f)) {
			continue
		}
		if err := os.Remove(f); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("remove old replay file: %w", err)
		}
	}
	return nil
}

// Restored is what a restore reports of the checkpoint it put into the run.
type Restored struct {
	Iteration  int
	ReplayFile string // the replay file the checkpoint names ("" for none)
}

// RestoreFunc puts the checkpoint file at path into a run's learner, env and replay, all or
// nothing as far as the run goes on: when it fails on the newest checkpoint, the fallback's
// restore overwrites every piece.
type RestoreFunc func(path string) (Restored, error)

// ResumeCheckpoints restores the newest checkpoint, or, when it or its replay file is damaged, the
// fallback, with a warning naming the damaged file. It returns the run's checkpoint state. When
// neither can be restored the error says why for both; nothing on disk is changed either way.
func (d Dir) ResumeCheckpoints(log *slog.Logger, restore RestoreFunc) (*Checkpoints, error) {
	newest := d.File(CheckpointFile)
	r, err := restore(newest)
	if err == nil {
		return &Checkpoints{dir: d, last: r.Iteration, good: true, replay: r.ReplayFile}, nil
	}
	fallback := d.File(FallbackFile)
	if _, serr := os.Stat(fallback); errors.Is(serr, fs.ErrNotExist) {
		return nil, fmt.Errorf("resume: %w; there is no fallback checkpoint (%s) to resume from instead, nothing was changed", err, FallbackFile)
	}
	fr, ferr := restore(fallback)
	if ferr != nil {
		return nil, fmt.Errorf("resume: both checkpoints are damaged, nothing was changed: %w; and the fallback: %w", err, ferr)
	}
	log.Warn(fmt.Sprintf("resuming from the fallback checkpoint %s at iteration %d, because the newest is damaged: %v", fallback, fr.Iteration, err),
		"damaged", damagedFile(err, newest), "fallback", fallback, "iteration", fr.Iteration)
	// checkpoint.bin is damaged: the next checkpoint replaces it and the fallback stays.
	return &Checkpoints{dir: d, last: fr.Iteration, prevReplay: fr.ReplayFile}, nil
}

// FileError is an error about one file of a run dir other than the checkpoint (a replay file),
// which a resume names as the damaged one.
type FileError struct {
	Path string
	Err  error
}

func (e *FileError) Error() string { return e.Err.Error() }
func (e *FileError) Unwrap() error { return e.Err }

// damagedFile is the file err is about: a FileError's, or else ckpt.
func damagedFile(err error, ckpt string) string {
	if fe, ok := errors.AsType[*FileError](err); ok {
		return fe.Path
	}
	return ckpt
}
