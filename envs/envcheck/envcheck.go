// Package envcheck checks that a vectorised env keeps the contract the learner and the bridge rely
// on, Gymnasium's, as Gymnasium's check_env does for a Python env: valid spaces, observations
// inside them, seeded determinism, finite rewards, what a copy does after its episode ends, invalid
// actions refused with an error (not a panic) and an idempotent Close. Each rule has a name
// (Rules); Check runs them all on envs it makes and reports each.
package envcheck

import (
	"context"
	"fmt"
	"strings"

	"github.com/sparsepcl/sparsepcl/envs"
)

// Maker makes a fresh VecEnv of copies copies in autoreset mode mode: a registry's, the bridge's, or
// a user's.
type Maker func(ctx context.Context, copies int, mode envs.AutoresetMode) (envs.VecEnv, error)

// Rule is one checked property: its name and what it says.
type Rule struct{ Name, Says string }

// The rules, in the order Check runs them.
var (
	RuleMake          = Rule{"make", "the env can be made"}
	RuleSpaces        = Rule{"spaces", "the observation and action spaces are valid (bounds, sizes, dtypes)"}
	RuleReset         = Rule{"reset-in-space", "Reset returns one row per copy, of the observation space's size and dtype, each inside the space"}
	RuleResetSeed     = Rule{"reset-seeded", "Reset with the same seeds returns the same observations"}
	RuleStep          = Rule{"step-in-space", "Step returns one row per copy inside the observation space, a reward and both end flags per copy"}
	RuleFinite        = Rule{"finite-rewards", "every reward is finite"}
	RuleDeterministic = Rule{"deterministic", "the same seeds and actions give the same observations, rewards and end flags"}
	RuleAfterEnd      = Rule{"after-end", "a copy whose episode ended repeats its final observation with reward 0 and its end flags (autoreset disabled), or starts a new episode with reward 0 and no flags (next-step autoreset)"}
	RuleInvalidAction = Rule{"invalid-action", "Step refuses an action outside the action space with an error, not a panic, and the env still steps"}
	RuleClose         = Rule{"close", "Close can be called twice"}
)

// Rules is every rule, in the order Check runs them.
var Rules = []Rule{RuleMake, RuleSpaces, RuleReset, RuleResetSeed, RuleStep, RuleFinite, RuleDeterministic, RuleAfterEnd, RuleInvalidAction, RuleClose}

// Options set what Check plays.
type Options struct {
	Seed  int64 // the seed of every reset and of the random actions
	Steps int   // random steps per rollout (0: 500)
}

// Result is one rule's outcome: Err nil when it holds, Skip the reason when it could not be checked.
type Result struct {
	Rule Rule
	Err  error
	Skip string
}

// Report is every rule's result for one env.
type Report struct {
	Env     string
	Results []Result
}

// OK reports whether no rule failed.
func (r Report) OK() bool { return len(r.Failed()) == 0 }

// Failed are the results of the rules that do not hold.
func (r Report) Failed() []Result {
	var out []Result
	for _, x := range r.Results {
		if x.Err != nil {
			out = append(out, x)
		}
	}
	return out
}

// String is the report as lines: "ok   rule", "FAIL rule: why" or "skip rule: why".
func (r Report) String() string {
	var b strings.Builder
	for _, x := range r.Results {
		switch {
		case x.Err != nil:
			fmt.Fprintf(&b, "FAIL %-15s %v\n", x.Rule.Name, x.Err)
		case x.Skip != "":
			fmt.Fprintf(&b, "skip %-15s %s\n", x.Rule.Name, x.Skip)
		default:
			fmt.Fprintf(&b, "ok   %-15s %s\n", x.Rule.Name, x.Rule.Says)
		}
	}
	return b.String()
}

// Check makes envs with newEnv (two copies) and checks every rule on them. A rule that depends on
// a failed one (every rule on an env that cannot be made) is skipped.
func Check(ctx context.Context, name string, newEnv Maker, opts Options) Report {
	if opts.Steps <= 0 {
		opts.Steps = 500
	}
	c := &checker{ctx: ctx, newEnv: newEnv, opts: opts, report: Report{Env: name}}
	c.run()
	return c.report
}

// checker runs the rules of one Check.
type checker struct {
	ctx    context.Context
	newEnv Maker
	opts   Options
	report Report
}

const copies = 2

func (c *checker) add(r Rule, err error) {
	c.report.Results = append(c.report.Results, Result{Rule: r, Err: err})
}
func (c *checker) skip(r Rule, why string) {
	c.report.Results = append(c.report.Results, Result{Rule: r, Skip: why})
}
func (c *checker) skipRest(rules []Rule, why string) {
	for _, r := range rules {
		c.skip(r, why)
	}
}

func (c *checker) run() {
	env, err := c.newEnv(c.ctx, copies, envs.AutoresetDisabled)
	c.add(RuleMake, err)
	if err != nil {
		c.skipRest(Rules[1:], "the env could not be made")
		return
	}
	c.play(env)
	env.Close()
	c.add(RuleClose, closeTwice(c.ctx, c.newEnv))
}

// play checks the rules between make and close on env; a rule that depends on a failed one is
// skipped.
func (c *checker) play(env envs.VecEnv) {
	last := len(Rules) - 1 // close: checked on an env of its own
	if err := checkSpaces(env); err != nil {
		c.add(RuleSpaces, err)
		c.skipRest(Rules[2:last], "the spaces are invalid")
		return
	}
	c.add(RuleSpaces, nil)
	first, err := c.reset(env)
	c.add(RuleReset, err)
	if err != nil {
		c.skipRest(Rules[3:last], "Reset fails")
		return
	}
	again, err := c.reset(env)
	if err == nil && !equalArrays(first, again) {
		err = fmt.Errorf("two resets with seeds %d and %d: %v, then %v", c.opts.Seed, c.opts.Seed+1, first, again)
	}
	c.add(RuleResetSeed, err)
	a := c.rollout(env)
	c.add(RuleStep, a.stepErr)
	c.add(RuleFinite, a.finiteErr)
	if a.stepErr != nil {
		c.skipRest([]Rule{RuleDeterministic, RuleAfterEnd, RuleInvalidAction}, "Step fails")
	} else {
		b := c.rollout(env)
		err := b.stepErr
		if err == nil {
			err = a.diff(b)
		}
		c.add(RuleDeterministic, err)
		c.checkAfterEnd(a)
		c.add(RuleInvalidAction, c.invalidActions(env))
	}
}

// seeds are the reset seeds of the copies.
func (c *checker) seeds() []int64 {
	s := make([]int64, copies)
	for i := range s {
		s[i] = c.opts.Seed + int64(i)
	}
	return s
}

// reset resets every copy with the seeds and checks the observations; it returns a copy of them.
func (c *checker) reset(env envs.VecEnv) (envs.Array, error) {
	obs, err := protect(func() (envs.Array, error) {
		o, _, err := env.Reset(c.ctx, envs.ResetRequest{Seeds: c.seeds()})
		return o, err
	})
	if err != nil {
		return envs.Array{}, fmt.Errorf("reset: %w", err)
	}
	if err := checkObs(env.ObservationSpace(), obs, env.NumEnvs()); err != nil {
		return envs.Array{}, fmt.Errorf("reset: %w", err)
	}
	return obs.Clone(), nil
}

// protect runs f, turning a panic into a *panicError.
func protect[T any](f func() (T, error)) (v T, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = &panicError{p}
		}
	}()
	return f()
}

// panicError is a panic of the env's, caught.
type panicError struct{ value any }

func (e *panicError) Error() string { return fmt.Sprintf("panicked: %v", e.value) }
