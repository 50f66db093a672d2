package config

// The flags of RegisterFlags by the part of a run they shape (each field's group tag), for
// commands that build only part of one (pcl bench, pcl diagnose, pcl eval) and refuse the flags
// they would ignore.

// flagGroup is the group of the config flag called name ("" when it has none or is no config flag).
func flagGroup(name string) string {
	name = CanonicalFlag(name)
	for _, s := range configFlags() {
		if s.flag == name {
			return s.group
		}
	}
	return ""
}

// MLPFlag reports whether a config flag only shapes the mlp network family of long-episode runs
// (Box observations, such as HalfCheetah), so commands that only train the lstm family on the
// algorithmic tasks do not honour it.
func MLPFlag(name string) bool { return flagGroup(name) == "mlp" }

// LearnerFlag reports whether a config flag shapes the env, the lstm learner or its sampler:
// the part of the config that bench and diagnose take from their flags (they set the run around
// it themselves).
func LearnerFlag(name string) bool { return flagGroup(name) == "learner" }

// ReplayFlag reports whether a config flag shapes the episode replay of the lstm family.
func ReplayFlag(name string) bool { return flagGroup(name) == "replay" }

// FlagNames is the set of flags RegisterFlags registers, older spellings included.
func FlagNames() map[string]bool {
	names := map[string]bool{}
	for _, s := range configFlags() {
		names[s.flag] = true
		if s.alias != "" {
			names[s.alias] = true
		}
	}
	return names
}

// FieldFlags maps the JSON name of every field that has a flag (all but no_threshold) to the
// flag RegisterFlags gives it, e.g. "learning_rate" to "learning-rate": how a program with these
// flags names the fields of a *FieldError.
func FieldFlags() map[string]string {
	out := map[string]string{}
	for _, s := range configFlags() {
		out[s.name] = s.flag
	}
	return out
}

// FieldsGiven reports a field (by JSON name, as train.Resolve asks) as given when its flag, or
// the flag's older spelling, is among the flags given.
func FieldsGiven(flags map[string]bool) func(field string) bool {
	byField := FieldFlags()
	given := map[string]bool{}
	for name, ok := range flags {
		given[CanonicalFlag(name)] = given[CanonicalFlag(name)] || ok
	}
	return func(field string) bool { return given[byField[field]] }
}
