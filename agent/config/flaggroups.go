package config

import (
	"flag"
	"reflect"
	"strings"
)

// The flags of RegisterFlags by the part of a run they shape, for commands that build only part
// of one (pcl bench, pcl diagnose, pcl eval) and refuse the flags they would ignore.

// MLPFlag reports whether a config flag only shapes the mlp network family of long-episode runs
// (Box observations, such as HalfCheetah), so commands that only train the lstm family on the
// algorithmic tasks do not honour it.
func MLPFlag(name string) bool {
	switch name {
	case "net", "mlp-hidden", "norm-obs", "grid", "num-envs", "steps-per-iter", "sub-episodes", "replay-steps", "recency-weight", "on-policy-step",
		"train-steps", "target-lag", "trust-region", "overlap":
		return true
	}
	return false
}

// LearnerFlag reports whether a config flag shapes the env, the lstm learner or its sampler:
// the part of the config that bench and diagnose take from their flags (they set the run around
// it themselves).
func LearnerFlag(name string) bool {
	switch name {
	case "env", "base", "max-steps", "curriculum", "algo", "form", "alpha", "tsallis-q", "gamma", "rollout", "critic-weight", "pg-scale",
		"hidden", "lr", "adam-beta1", "adam-beta2", "adam-eps", "clip-norm", "batch", "seed",
		"optimizer", "logit-init-scale", "lambda-init", "embed-std", "explore", "explore-share":
		return true
	}
	return false
}

// FlagNames is the set of flags RegisterFlags registers.
func FlagNames() map[string]bool {
	fs := flag.NewFlagSet("", flag.ContinueOnError)
	c := Default()
	c.RegisterFlags(fs)
	names := map[string]bool{}
	fs.VisitAll(func(f *flag.Flag) { names[f.Name] = true })
	return names
}

// ReplayFlag reports whether a config flag shapes the episode replay of the lstm family.
func ReplayFlag(name string) bool {
	return name == "replay" || strings.HasPrefix(name, "replay-") && name != "replay-steps"
}

// FieldFlags maps the JSON name of every field that has a flag (all but no_threshold) to the
// flag RegisterFlags gives it, e.g. "learning_rate" to "lr": how a program with these flags
// names the fields of a *FieldError.
func FieldFlags() map[string]string {
	c := Default()
	fs := flag.NewFlagSet("", flag.ContinueOnError)
	c.RegisterFlags(fs)
	byAddr := map[uintptr]string{} // each flag writes into one field: match them by address
	fs.VisitAll(func(f *flag.Flag) { byAddr[reflect.ValueOf(f.Value).Pointer()] = f.Name })
	out := map[string]string{}
	for _, f := range fieldsOf(reflect.ValueOf(&c).Elem()) {
		if name, ok := byAddr[f.v.Addr().Pointer()]; ok {
			out[f.name] = name
		}
	}
	return out
}

// FieldsGiven reports a field (by JSON name, as train.Resolve asks) as given when its flag is
// among the flags given.
func FieldsGiven(flags map[string]bool) func(field string) bool {
	byField := FieldFlags()
	return func(field string) bool { return flags[byField[field]] }
}
