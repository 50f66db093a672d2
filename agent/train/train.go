// Package train runs PCL training: one iteration loop (loop.go: sample, train, greedy evaluation,
// metrics, checkpoint) over the one regime (session.go) with the member of the run's network family (family.go: the LSTM's episodes.go, the MLPs' steps.go),
// which an Observer can watch from inside (observer.go: the lab's diagnosis probe and pcl bench run the loop that way), the run directory (config.json and checkpoints written atomically,
// metrics.csv appended and mirrored into TensorBoard event files, replay-<iteration>.bin beside
// the checkpoint, the previous checkpoint kept as checkpoint.prev.bin, and the caller's plots
// through Options.Plot), exact resume from the last checkpoint (parameters, Adam state,
// training curriculum, replay buffer) or, when it is damaged, from the previous one, clean stops on
// cancel or a non-finite loss, progress reports, a memory estimate checked before anything is
// allocated, and greedy evaluation of a run, also per curriculum length.
//
// The greedy evaluation during training (metrics column greedy_reward) is measured at the
// training curriculum's current length: before each evaluation the evaluation env's curriculum is
// set to a copy of the training env's, as in the released code, where training and evaluation envs
// shared one curriculum. Evaluation never feeds back into training: the training columns of
// metrics.csv are the same whatever the evaluation schedule (its random streams are separate).
package train

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"

	"github.com/sparsepcl/sparsepcl/agent/config"
	"github.com/sparsepcl/sparsepcl/agent/memory"
	"github.com/sparsepcl/sparsepcl/agent/pcl"
	"github.com/sparsepcl/sparsepcl/agent/progress"
	"github.com/sparsepcl/sparsepcl/agent/provenance"
	"github.com/sparsepcl/sparsepcl/agent/runstore"
	"github.com/sparsepcl/sparsepcl/agent/tensor"
	"github.com/sparsepcl/sparsepcl/envs"
)

// Options are the parts of a run that are not hyperparameters.
type Options struct {
	// Dir is the run directory (created). Empty: a temporary directory, removed when the run
	// ends, for a run that is only watched (Observer) and keeps nothing.
	Dir      string
	Resume   bool           // continue from Dir's checkpoint
	Registry *envs.Registry // where Go-native env ids are looked up (when Envs is nil)
	Envs     EnvMaker       // makes the run's envs; nil: RegistryEnvs{Registry}
	Engine   *tensor.Engine // nil: resolved from SPARSEPCL_BLAS

	// Progress says where the progress report goes (Progress.W nil: nowhere) and how: by default
	// a live line rewritten in place, or plain or JSON lines at an interval of time.
	Progress progress.Options

	// MaxMemory is the most memory the run may be estimated to need: a run above it is refused
	// before anything is allocated or written (memory.ErrTooLarge). The zero value is memory.DefaultLimit();
	// memory.NoLimit() turns the check off.
	MaxMemory memory.Limit

	Logger *slog.Logger // nil: slog.Default()
	// FieldName names a config field (by its JSON name) in what the run logs, such as the levers
	// of the collapse warning; pcl names their flags. nil: the JSON name.
	FieldName func(field string) string

	// Observer, when not nil, watches each iteration of an lstm run from inside the loop (see
	// Observer; the lab's diagnosis probe and pcl bench); the mlp family refuses it.
	Observer Observer

	// Plot, when not nil, draws the run's figures: it is called at every scheduled checkpoint and
	// at the end (also after a cancel) with every metrics row so far. Its error is logged as a
	// warning and does not stop the run. The library draws nothing itself; pcl train passes the
	// lab's run plots (reward.png, maxprob.png, sparsity.png, value.png).
	Plot func(RunPlots) error

	session *provenance.Session // this process's provenance, collected by Run
}

// Summary is what a finished (or stopped) run reports.
type Summary struct {
	Config       config.Config // the run's config (on resume, the saved one with its new total)
	Iterations   int
	Interrupted  bool
	LastGreedy   float64
	SecondsPerIt float64
	Rows         []runstore.Row
	// EnvSteps is the run's total; Steps the time split of a long-episode run (nil otherwise).
	EnvSteps int64
	Steps    *runstore.StepsState
}

// ErrNonFinite marks a run stopped because the loss, a gradient or a parameter became NaN or Inf
// (the learner's pcl.ErrNonFinite).
var ErrNonFinite = pcl.ErrNonFinite

// ErrDiverged marks a run stopped because a training step's loss exceeded Config.MaxLoss.
var ErrDiverged = errors.New("loss above the ceiling")

// ErrRunExists marks a new run refused because its directory holds a checkpoint: resume it
// (Options.Resume) or train in another directory.
var ErrRunExists = errors.New("already holds a run")

// ErrNothingToDo marks a resume asked for a total of iterations that the run has already done
// (see DoneError).
var ErrNothingToDo = errors.New("nothing to do")

// DoneError refuses a resume whose total number of iterations (Config.Iters) is not above the
// iterations the run has done. Nothing is changed. It wraps ErrNothingToDo.
type DoneError struct {
	Dir         string
	Done, Total int
}

func (e *DoneError) Error() string {
	return fmt.Sprintf("%s has already done %d iterations, and the total asked for is %d: nothing to do, nothing was changed", e.Dir, e.Done, e.Total)
}

// Unwrap makes errors.Is(err, ErrNothingToDo) hold.
func (e *DoneError) Unwrap() error { return ErrNothingToDo }

// checkDiverged returns an ErrDiverged error when loss is above cfg.MaxLoss (when set), naming
// the field with a *config.FieldError.
func checkDiverged(cfg config.Config, loss float64) error {
	if cfg.MaxLoss > 0 && loss > cfg.MaxLoss {
		return fmt.Errorf("%w: %w", ErrDiverged, &config.FieldError{Field: "max_loss", Value: cfg.MaxLoss,
			Reason: fmt.Sprintf("a training step's loss, %.4g, is above it", loss)})
	}
	return nil
}

// MakeEnv builds the VecEnv of n copies of cfg's env in AutoresetDisabled mode.
func MakeEnv(reg *envs.Registry, cfg config.Config, n int) (envs.VecEnv, error) {
	opts := map[string]any{"base": cfg.Base, "autoreset": "disabled", "per_copy_curriculum": cfg.Curriculum == config.CurriculumPerCopy}
	env, err := reg.MakeVec(cfg.Env, n, opts)
	if err != nil {
		return nil, err
	}
	return env, nil
}

// iterSeed derives a deterministic seed for (run seed, iteration, purpose).
func iterSeed(seed int64, iter int, purpose uint64) int64 {
	x := uint64(seed)*0x9e3779b97f4a7c15 ^ uint64(iter)*0xbf58476d1ce4e5b9 ^ purpose*0x94d049bb133111eb
	x ^= x >> 31
	x *= 0xd6e9f8cc4f2a8e4b
	x ^= x >> 29
	return int64(x >> 2)
}

func iterRNG(seed int64, iter int, purpose uint64) *rand.Rand {
	return rand.New(rand.NewPCG(uint64(iterSeed(seed, iter, purpose)), purpose))
}

// Run trains cfg into opts.Dir. On resume the directory's config.json is used, with cfg.Iters as
// the new total number of iterations (a total not above the iterations done is a DoneError), and
// training continues exactly from the checkpoint: parameters, Adam state, the training curriculum
// and the replay buffer are restored, and metrics.csv is appended to. When the newest checkpoint or
// its replay file is damaged, the run resumes from the fallback (the checkpoint before) with a
// warning, its metrics.csv cut back to match. A configuration estimated to need more memory than
// opts.MaxMemory is refused (memory.ErrTooLarge) before anything is allocated or written. A run that cannot
// start changes no file. Cancelling ctx saves a checkpoint and returns a Summary with Interrupted
// set and a nil error. A non-finite loss, gradient or parameter stops the run with an error
// wrapping ErrNonFinite that names the iteration; nothing is saved then, so the last checkpoint
// stays good. An empty opts.Dir trains in a temporary directory, removed when Run returns.
func Run(ctx context.Context, cfg config.Config, opts Options) (_ Summary, err error) {
	if opts.Dir == "" {
		if opts.Resume {
			return Summary{}, fmt.Errorf("resume: no run directory")
		}
		if opts.Dir, err = os.MkdirTemp("", "sparsepcl-run-"); err != nil {
			return Summary{}, fmt.Errorf("temporary run directory: %w", err)
		}
		defer func() {
			if rerr := os.RemoveAll(opts.Dir); rerr != nil && err == nil {
				err = fmt.Errorf("temporary run directory: %w", rerr)
			}
		}()
	}
	cfg, err = prepare(cfg, opts)
	if err != nil {
		return Summary{}, err
	}
	if opts.Engine == nil {
		if opts.Engine, err = tensor.NewEngine(); err != nil {
			return Summary{}, err
		}
	}
	sess := provenance.Collect(ctx, opts.Engine.Backend(), 0)
	opts.session = &sess
	reg, err := FamilyOf(cfg).newRegime(ctx, cfg, opts)
	if err != nil {
		return Summary{}, err
	}
	defer closeKeepingErr(&err, reg)
	return run(ctx, cfg, opts, reg)
}

// envMaker is opts.Envs, or the registry's Go-native envs.
func (opts Options) envMaker() EnvMaker {
	if opts.Envs != nil {
		return opts.Envs
	}
	return RegistryEnvs{Registry: opts.Registry}
}

// fieldName is opts.FieldName, or the JSON name itself.
func (opts Options) fieldName(field string) string {
	if opts.FieldName != nil {
		return opts.FieldName(field)
	}
	return field
}

// logger is opts.Logger or the default logger.
func (opts Options) logger() *slog.Logger {
	if opts.Logger != nil {
		return opts.Logger
	}
	return slog.Default()
}

// prepare resolves the run's config (the saved one on resume, with cfg.Iters; the network family
// when "auto") and validates it. The run loops write it into the run directory (openRunMetrics)
// once their envs are made, so that a run whose env cannot be made leaves no directory behind.
func prepare(cfg config.Config, opts Options) (config.Config, error) {
	if opts.Registry == nil && opts.Envs == nil {
		return cfg, fmt.Errorf("no environment registry")
	}
	if opts.Resume {
		if !runstore.Dir(opts.Dir).HasCheckpoint() {
			return cfg, fmt.Errorf("resume: %s holds no checkpoint (%s): nothing to resume; start the run instead (Options.Resume false)", opts.Dir, runstore.CheckpointFile)
		}
		saved, err := runstore.Dir(opts.Dir).Config()
		if err != nil {
			return cfg, fmt.Errorf("resume: %w", err)
		}
		saved.Iters = cfg.Iters
		cfg = saved
	}
	cfg = ResolveNet(cfg)
	if err := cfg.Validate(); err != nil {
		return cfg, err
	}
	if !opts.Resume && runstore.Dir(opts.Dir).HasCheckpoint() {
		return cfg, fmt.Errorf("%s %w", opts.Dir, ErrRunExists)
	}
	return cfg, nil
}

// openRunMetrics writes the run's first files: a new run's directory, config.json and an empty
// metrics.csv; a resumed run's metrics.csv cut to the rows before the checkpoint of iteration
// from, then its config.json. The loops call it once their envs are made and (on resume) the
// checkpoint and replay are read, so that a run that cannot start changes no file: that includes a
// resume whose metrics do not match the checkpoint, or whose total is already done (DoneError),
// and a run whose directory another run is writing (runstore.ErrRunInUse; the lock is the
// writer's). The writer holds the lock until the loop closes it, last.
func openRunMetrics(opts Options, cfg config.Config, from int, log *slog.Logger) (*runstore.Writer, []runstore.Row, error) {
	if err := os.MkdirAll(opts.Dir, 0o755); err != nil {
		return nil, nil, fmt.Errorf("run directory: %w", err)
	}
	lock, err := runstore.Dir(opts.Dir).Lock()
	if err != nil {
		return nil, nil, err
	}
	mw, kept, err := startRunMetrics(opts, cfg, from, lock, log)
	if err != nil {
		lock.Close()
		return nil, nil, err
	}
	if err := mw.StartTensorBoard(from); err != nil {
		mw.Close()
		return nil, nil, err
	}
	return mw, kept, nil
}

// startRunMetrics writes what openRunMetrics says under lock, and returns the metrics writer,
// which holds the lock from then on, with the rows kept from before the checkpoint on resume.
func startRunMetrics(opts Options, cfg config.Config, from int, lock *runstore.Lock, log *slog.Logger) (*runstore.Writer, []runstore.Row, error) {
	dir := runstore.Dir(opts.Dir)
	if !opts.Resume {
		if err := writeRunFiles(opts, cfg, from); err != nil {
			return nil, nil, err
		}
		mw, err := dir.CreateMetrics(lock)
		return mw, nil, err
	}
	sc, err := dir.ScanMetrics(from)
	if err != nil {
		return nil, nil, fmt.Errorf("resume: %w", err)
	}
	if from >= cfg.Iters {
		return nil, nil, &DoneError{Dir: opts.Dir, Done: from, Total: cfg.Iters}
	}
	mw, err := sc.Open(lock)
	if err != nil {
		return nil, nil, fmt.Errorf("resume: %w", err)
	}
	if sc.Dropped > 0 {
		log.Info("resume: metrics rows after the checkpoint dropped (they are recomputed)", "rows", sc.Dropped)
	}
	if err := writeRunFiles(opts, cfg, from); err != nil {
		mw.Close()
		return nil, nil, err
	}
	return mw, sc.Kept, nil
}

// writeRunFiles writes the run's config.json and appends this process's session, from iteration
// from, to its run.json (the env server's versions from opts.Envs, once it has made the envs).
func writeRunFiles(opts Options, cfg config.Config, from int) error {
	dir := runstore.Dir(opts.Dir)
	if err := dir.WriteConfig(cfg); err != nil {
		return err
	}
	if opts.session == nil {
		return nil
	}
	s := *opts.session
	s.FromIteration = from
	if info, ok := opts.Envs.(EnvServerInfo); ok {
		s.EnvServer = info.EnvServerVersions()
	}
	return dir.AppendProvenance(s)
}

// EnvServerInfo is implemented by an EnvMaker whose envs another program serves (the bridge's
// Python server): the versions that program reports (gymnasium, mujoco, numpy, ...), recorded in
// run.json. Nil for envs made in this process.
type EnvServerInfo interface {
	EnvServerVersions() map[string]string
}

// stoppedError names where a run stopped and which checkpoint is on disk.
func stoppedError(cp *runstore.Checkpoints, it int, what string, err error) error {
	kept := "no checkpoint was written"
	if cp.Last() >= 0 {
		kept = fmt.Sprintf("the last good checkpoint (iteration %d) is kept in %s", cp.Last(), cp.Dir())
	}
	return fmt.Errorf("stopped at iteration %d, %s: %w; %s", it, what, err, kept)
}
