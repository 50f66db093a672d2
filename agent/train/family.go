package train

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/sparsepcl/sparsepcl/agent/config"
	"github.com/sparsepcl/sparsepcl/envs"
)

// Family is what differs between the two network families a run can train: the LSTM over whole
// episodes of the algorithmic tasks (family_lstm.go) and the feed-forward networks over
// sub-episodes of long episodes (family_mlp.go). It is chosen once, from the resolved config
// (FamilyOf), and the training loop, the config's resolution and the commands (eval, play,
// diagnose, compare) call through it instead of asking which family a config has.
type Family interface {
	// Net is the family's config.Net value.
	Net() config.Net
	// Supports returns nil when the family has tool, or an *UnsupportedError that says what to
	// use instead; subject is what the message names: the env (diagnose, compare) or the
	// run directory (play, eval's options).
	Supports(tool Tool, subject string) error
	// Evaluate plays the greedy policy of the checkpoint of the run in dir and writes eval's
	// report to w.
	Evaluate(ctx context.Context, dir string, opts EvalOptions, w io.Writer) error

	// defaults applies the family's defaults to the fields of cfg that were not given.
	defaults(cfg config.Config, given func(name string) bool) (config.Config, error)
	// newRegime makes the family's sampling regime for cfg: its envs, learner and replay.
	newRegime(ctx context.Context, cfg config.Config, opts Options) (regime, error)
}

// FamilyOf is the network family of cfg, its Net "auto" resolved from the env's observation space
// (ResolveNet).
func FamilyOf(cfg config.Config) Family {
	if ResolveNet(cfg).Net == config.NetMLP {
		return mlpFamily{}
	}
	return lstmFamily{}
}

// RunFamily reads the config of the run in dir and returns its family and config.
func RunFamily(dir string) (Family, config.Config, error) {
	cfg, err := readRunConfig(dir)
	if err != nil {
		return nil, cfg, err
	}
	return FamilyOf(cfg), cfg, nil
}

// Tool is a command or option that only one family has.
type Tool int

// The tools only one family has.
const (
	ToolDiagnose  Tool = iota // pcl diagnose: the LSTM learner's probe
	ToolCompare               // pcl compare: a sweep over the algorithmic tasks' bases
	ToolPlay                  // pcl play --run: the tape of an algorithmic task, step by step
	ToolPerLength             // pcl eval --per-length: every curriculum level
	ToolRecord                // pcl eval --record: a long episode drawn as a GIF
	ToolObserver              // an Observer: watches the LSTM's episodes
	ToolOverlap               // --overlap: stepping the envs while the learner trains on sub-episodes
	ToolReturns               // pcl eval --returns: a long-episode run's greedy returns as JSON
)

var toolNames = [...]string{"pcl diagnose", "pcl compare", "pcl play --run", "pcl eval --per-length", "pcl eval --record",
	"an Observer", "--overlap", "pcl eval --returns"}

func (t Tool) String() string {
	if t < 0 || int(t) >= len(toolNames) {
		return fmt.Sprintf("Tool(%d)", int(t))
	}
	return toolNames[t]
}

// ErrUnsupported marks a tool asked of a family that does not have it (UnsupportedError).
var ErrUnsupported = errors.New("not supported by the network family")

// UnsupportedError says which tool a family does not have, and for what: data, from which a
// command can give its advice. It wraps ErrUnsupported.
type UnsupportedError struct {
	Tool    Tool
	Family  config.Net // config.NetLSTM or config.NetMLP
	Subject string     // the env or the run directory the tool was asked of
}

func (e *UnsupportedError) Error() string {
	return fmt.Sprintf("%s is not for %s: it trains the %s family", e.Tool, e.Subject, e.Family)
}

// Unwrap makes errors.Is(err, ErrUnsupported) hold.
func (e *UnsupportedError) Unwrap() error { return ErrUnsupported }

// EvalOptions are what a greedy evaluation of a run directory needs besides the run.
type EvalOptions struct {
	Registry *envs.Registry // the Go-native envs (the algorithmic tasks)
	Envs     EnvMaker       // the envs of a long-episode run (nil: RegistryEnvs{Registry})
	Episodes int            // greedy episodes (at each curriculum level with PerLength)
	Seed     int64
	// PerLength also reports every curriculum level (the algorithmic tasks).
	PerLength bool
	// Record, when not empty, is the GIF file one greedy episode of a long-episode run is drawn
	// into by Render.
	Record string
	Render Renderer
	// Returns, when not empty, is the file a long-episode run's greedy returns are also written
	// to, as GreedyReturns in JSON (atomically).
	Returns string
}

// GreedyReturns is the greedy evaluation of a long-episode run's checkpoint: one return per
// episode (copy i from seed Seed+i), as pcl eval --returns writes it.
type GreedyReturns struct {
	Run       string    `json:"run"`
	Iteration int       `json:"iteration"`
	EnvSteps  int64     `json:"env_steps"`
	Seed      int64     `json:"seed"`
	Returns   []float64 `json:"returns"`
	Mean      float64   `json:"mean"`
	Std       float64   `json:"std"` // the population std of Returns, as pcl eval prints it
}

// Renderer replays an episode's actions in env id from seed and writes an animated GIF to out,
// returning the frames drawn and the replay's return (internal/envmaker.Maker.Render).
type Renderer func(ctx context.Context, id string, seed int64, actions []any, out string) (frames int, ret float64, err error)

func (o EvalOptions) envMaker() EnvMaker {
	if o.Envs != nil {
		return o.Envs
	}
	return RegistryEnvs{Registry: o.Registry}
}
