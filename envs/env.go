// Package envs defines the environment contracts of sparsepcl: spaces, the single-copy Env, the
// batched VecEnv, typed batch arrays, and a registry of Go-native environments.
//
// The semantics are Gymnasium's (>= 1.0): Reset takes a seed and options; Step returns terminated (the
// task ended) and truncated (cut off from outside) separately, and the two stay apart all the way to
// the learner, because a truncated episode bootstraps from V and a terminated one does not.
//
// Values of a single copy use one canonical Go type per space kind (see Space). Batches of values are
// Arrays: flat, typed, row-major slices with a leading copy dimension, never []any.
package envs

import "context"

// Info carries auxiliary, per-copy diagnostics. It may be nil.
type Info map[string]any

// Env is one environment copy. Observations and actions use the canonical value types of their spaces.
type Env interface {
	// Reset starts a new episode. A nil seed keeps the current random stream; options are env-specific.
	Reset(seed *int64, options map[string]any) (obs any, info Info, err error)
	// Step applies one action. Stepping after the episode ended without a Reset is an error.
	Step(action any) (obs any, reward float64, terminated, truncated bool, info Info, err error)
	ActionSpace() Space
	ObservationSpace() Space
	Close() error
}

// AutoresetMode says what a VecEnv does with a copy whose episode has ended.
type AutoresetMode int

const (
	// AutoresetNextStep is Gymnasium's default: the step that ends an episode returns its final
	// observation; the next Step of that copy ignores the action, resets it and returns the first
	// observation of the new episode with reward 0 and both flags false.
	AutoresetNextStep AutoresetMode = iota
	// AutoresetDisabled leaves ended copies alone until Reset with a mask names them. Stepping an ended
	// copy does not touch it: its row repeats the final observation with reward 0 and the end flags
	// it ended with. This is the mode the PCL sampler uses to collect whole episodes in lockstep.
	AutoresetDisabled
)

func (m AutoresetMode) String() string {
	switch m {
	case AutoresetNextStep:
		return "next-step"
	case AutoresetDisabled:
		return "disabled"
	default:
		return "unknown"
	}
}

// ResetRequest says which copies of a VecEnv to reset and how.
type ResetRequest struct {
	// Seeds, when non-nil, holds one seed per copy (len NumEnvs). Nil keeps each copy's random stream.
	Seeds []int64
	// Mask, when non-nil, selects the copies to reset (len NumEnvs); the rows of the others are their
	// current observations. Nil resets every copy.
	Mask []bool
	// Options are passed to every reset copy.
	Options map[string]any
	// PerCopy, when non-nil (len NumEnvs), holds options for single copies, merged over Options.
	PerCopy []map[string]any
}

// StepResult is the outcome of one batched step. Its slices belong to the VecEnv and are overwritten
// by the next call: copy what must outlive it.
type StepResult struct {
	Obs        Array // NumEnvs rows of the observation space's flat size
	Rewards    []float64
	Terminated []bool
	Truncated  []bool
	// Infos is nil unless the env produced diagnostics; then it has one entry per copy (entries may be nil).
	Infos []Info
}

// VecEnv is N copies of one environment stepped as one batch. Every method that may wait takes a
// context; Go-native implementations never block, remote ones honour its deadline.
type VecEnv interface {
	NumEnvs() int
	// ObservationSpace and ActionSpace describe a single copy.
	ObservationSpace() Space
	ActionSpace() Space
	AutoresetMode() AutoresetMode
	// Reset resets the copies the request selects and returns the observation of every copy. The
	// returned Array belongs to the VecEnv, like StepResult.
	Reset(ctx context.Context, req ResetRequest) (Array, []Info, error)
	// Step applies one action per copy: actions has NumEnvs rows of the action space's flat size.
	Step(ctx context.Context, actions Array) (StepResult, error)
	Close() error
}
