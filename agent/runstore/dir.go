// Package runstore is a training run's directory as one type, Dir: the files a run keeps there
// (config.json, run.json, metrics.csv, memory.csv, checkpoint.bin with its fallback and the replay
// files they name, the TensorBoard events) and the lock that keeps a second writer out. The
// trainer writes a run through it; eval, play, report and sweep read runs through it.
package runstore

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/sparsepcl/sparsepcl/agent/config"
	"github.com/sparsepcl/sparsepcl/agent/provenance"
)

// File names inside a run directory.
const (
	ConfigFile     = "config.json"
	MetricsFile    = "metrics.csv"
	CheckpointFile = "checkpoint.bin"
	// FallbackFile is the checkpoint before the newest, kept (with the replay file it names) so
	// that a run whose newest checkpoint or replay file is damaged resumes from it.
	FallbackFile = "checkpoint.prev.bin"
	// ProvenanceFile records what produced the run: one session per process that trained it (git
	// commit and dirty flag, Go version, BLAS, host, cores, env server versions).
	ProvenanceFile = provenance.FileName
	// MemoryLogFile is where a long-episode run logs, at every checkpoint, the resident memory of
	// its own process and of its child processes (the local env servers): the soak check that
	// both stay flat once the replay has filled.
	MemoryLogFile = "memory.csv"
)

// ErrRunInUse marks a run refused because another run, in this process or another, is writing
// its directory: two writers would interleave its metrics and overwrite each other's checkpoints.
var ErrRunInUse = errors.New("is in use by another run (its lock is held): wait for that run or stop it; nothing was changed")

// Dir is a run directory.
type Dir string

// File is the path of the run's file name.
func (d Dir) File(name string) string { return filepath.Join(string(d), name) }

// Config reads the run's config.json.
func (d Dir) Config() (config.Config, error) { return config.ReadFile(d.File(ConfigFile)) }

// WriteConfig writes cfg as the run's config.json (the directory must exist).
func (d Dir) WriteConfig(cfg config.Config) error { return cfg.WriteFile(d.File(ConfigFile)) }

// Metrics reads the run's metrics.csv.
func (d Dir) Metrics() ([]Row, error) { return ReadMetrics(d.File(MetricsFile)) }

// HasCheckpoint reports whether the run holds a checkpoint file.
func (d Dir) HasCheckpoint() bool {
	_, err := os.Stat(d.File(CheckpointFile))
	return err == nil
}

// AppendProvenance appends a process's session to the run's run.json.
func (d Dir) AppendProvenance(s provenance.Session) error { return provenance.Append(string(d), s) }

// InUse reports whether another run holds the lock of the directory, that is, is training into
// it now (false for a directory that does not exist).
func (d Dir) InUse() bool {
	l, err := d.Lock()
	if err != nil {
		return errors.Is(err, ErrRunInUse)
	}
	l.Close()
	return false
}

// Lock is a run directory's lock, held until Close.
type Lock struct{ fh *os.File }

// Close releases the lock. A nil, empty or released Lock does nothing.
func (l *Lock) Close() error {
	if l == nil || l.fh == nil {
		return nil
	}
	fh := l.fh
	l.fh = nil
	if err := fh.Close(); err != nil {
		return fmt.Errorf("release the run directory's lock: %w", err)
	}
	return nil
}
