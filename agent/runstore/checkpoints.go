package runstore

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"

	"github.com/sparsepcl/sparsepcl/agent/atomicfile"
	"github.com/sparsepcl/sparsepcl/agent/nn"
	"github.com/sparsepcl/sparsepcl/agent/nn/checkpoint"
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

// Write saves the checkpoint of meta.Iteration (nothing when it is already on disk): the replay
// (saveReplay; nil without replay) into its own file first, then the newest checkpoint, when good,
// copied to the fallback, then the new checkpoint, params with meta naming the replay file, and
// last the removal of replay files that neither checkpoint names. Each file is written
// atomically, so a crash at any point leaves a newest checkpoint whose replay file is whole.
func (c *Checkpoints) Write(meta Meta, params []*nn.Param, saveReplay func(path string) error) error {
	it := meta.Iteration
	if c.last == it {
		return nil
	}
	meta.ReplayFile = ""
	if saveReplay != nil {
		meta.ReplayFile = ReplayFileName(it)
		if err := saveReplay(c.dir.File(meta.ReplayFile)); err != nil {
			return fmt.Errorf("checkpoint of iteration %d: %w", it, err)
		}
	}
	b, err := json.Marshal(meta)
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
	c.last, c.good, c.replay = it, true, meta.ReplayFile
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

// RestoreFunc puts a checkpoint (its file at path and decoded metadata) into a run's learner, env
// and replay, all or nothing as far as the run goes on: when it fails on the newest checkpoint,
// the fallback's restore overwrites every piece.
type RestoreFunc func(path string, f *checkpoint.File, meta Meta) error

// ResumeCheckpoints restores the newest checkpoint, or, when it or its replay file is damaged, the
// fallback, with a warning naming the damaged file. It returns the restored checkpoint's metadata
// and the run's checkpoint state. When neither can be restored the error says why for both;
// nothing on disk is changed either way.
func (d Dir) ResumeCheckpoints(log *slog.Logger, restore RestoreFunc) (Meta, *Checkpoints, error) {
	newest := d.File(CheckpointFile)
	meta, err := restoreFile(newest, restore)
	if err == nil {
		return meta, &Checkpoints{dir: d, last: meta.Iteration, good: true, replay: meta.ReplayFile}, nil
	}
	fallback := d.File(FallbackFile)
	if _, serr := os.Stat(fallback); errors.Is(serr, fs.ErrNotExist) {
		return Meta{}, nil, fmt.Errorf("resume: %w; there is no fallback checkpoint (%s) to resume from instead, nothing was changed", err, FallbackFile)
	}
	fmeta, ferr := restoreFile(fallback, restore)
	if ferr != nil {
		return Meta{}, nil, fmt.Errorf("resume: both checkpoints are damaged, nothing was changed: %w; and the fallback: %w", err, ferr)
	}
	log.Warn(fmt.Sprintf("resuming from the fallback checkpoint %s at iteration %d, because the newest is damaged: %v", fallback, fmeta.Iteration, err),
		"damaged", damagedFile(err, newest), "fallback", fallback, "iteration", fmeta.Iteration)
	// checkpoint.bin is damaged: the next checkpoint replaces it and the fallback stays.
	return fmeta, &Checkpoints{dir: d, last: fmeta.Iteration, prevReplay: fmeta.ReplayFile}, nil
}

// restoreFile reads the checkpoint at path, checks its metadata and restores it.
func restoreFile(path string, restore RestoreFunc) (Meta, error) {
	f, meta, err := ReadCheckpoint(path)
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
