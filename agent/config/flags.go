package config

import (
	"flag"
	"fmt"
	"reflect"
	"strings"
)

// Each field of Config is named once, by its JSON tag, and its flag is derived from the struct
// tags beside it:
//
//	json:"name"   the field's name in config.json; the flag's is the same with "_" replaced by "-"
//	flag:"-"      no flag
//	alias:"name"  an older spelling of the flag, still accepted but left out of -h (--lr of
//	              --learning-rate), so that command lines and scripts written with it keep working
//	help:"text"   the flag's help text
//	group:"name"  the flags' group of flaggroups.go: "learner", "mlp" or "replay" (none: no group)

// flagSpec is the flag of one Config field.
type flagSpec struct {
	field
	flag, alias, help, group string
}

// flagSpecs lists the fields of rv, a Config, that have a flag, in config.json's order (rv is
// addressable when the flags are to write into it).
func flagSpecs(rv reflect.Value) []flagSpec {
	var out []flagSpec
	for _, f := range fieldsOf(rv) {
		if f.tag.Get("flag") == "-" {
			continue
		}
		out = append(out, flagSpec{field: f, flag: strings.ReplaceAll(f.name, "_", "-"), alias: f.tag.Get("alias"),
			help: f.tag.Get("help"), group: f.tag.Get("group")})
	}
	return out
}

// configFlags is flagSpecs of a Config that is not written: for the names, help and groups.
func configFlags() []flagSpec { return flagSpecs(reflect.ValueOf(Config{})) }

// RegisterFlags adds one flag per field to fs (all but those tagged flag:"-"), writing into c
// (whose current values are the defaults shown). Flag names are the JSON names with "_" replaced
// by "-". A field's older spelling (FlagAliases) is registered too, on the same value, with a
// usage that says so: a program's -h leaves it out (IsFlagAlias).
func (c *Config) RegisterFlags(fs *flag.FlagSet) {
	for _, s := range flagSpecs(reflect.ValueOf(c).Elem()) {
		s.register(fs)
		if s.alias != "" {
			fs.Var(fs.Lookup(s.flag).Value, s.alias, "deprecated: the old spelling of --"+s.flag)
		}
	}
}

// FlagAliases maps each older spelling of a config flag to the flag it stands for ("lr" to
// "learning-rate").
func FlagAliases() map[string]string {
	out := map[string]string{}
	for _, s := range configFlags() {
		if s.alias != "" {
			out[s.alias] = s.flag
		}
	}
	return out
}

// CanonicalFlag is the flag an older spelling stands for, or name itself when it is none.
func CanonicalFlag(name string) string {
	if f, ok := FlagAliases()[name]; ok {
		return f
	}
	return name
}

// IsFlagAlias reports whether f, a flag of fs, is the older spelling of a config flag that
// RegisterFlags registered on fs (the two share their value), to be left out of fs's help.
func IsFlagAlias(fs *flag.FlagSet, f *flag.Flag) bool {
	canonical := CanonicalFlag(f.Name)
	if canonical == f.Name {
		return false
	}
	g := fs.Lookup(canonical)
	return g != nil && g.Value == f.Value
}

// register adds s's flag to fs, writing into s's field, its current value the default. A field of
// a named string type (Algo) is registered as a string flag through a *string view of it: -h shows
// it as every string flag ("string", the default quoted), and any value parses, for Validate to
// judge with a FieldError naming the flag, as for every other field. A field of a kind no flag
// takes is a programming error, caught by the tests, never a user's: it panics.
func (s flagSpec) register(fs *flag.FlagSet) {
	switch s.v.Kind() {
	case reflect.Float64:
		p := as[float64](s.v)
		fs.Float64Var(p, s.flag, *p, s.help)
	case reflect.Int:
		p := as[int](s.v)
		fs.IntVar(p, s.flag, *p, s.help)
	case reflect.Int64:
		p := as[int64](s.v)
		fs.Int64Var(p, s.flag, *p, s.help)
	case reflect.Bool:
		p := as[bool](s.v)
		fs.BoolVar(p, s.flag, *p, s.help)
	case reflect.String:
		p := as[string](s.v)
		fs.StringVar(p, s.flag, *p, s.help)
	default:
		panic(fmt.Sprintf("config: field %s is a %s, which no flag takes: tag it flag:\"-\"", s.name, s.v.Type()))
	}
}

// as is a pointer to v, which is addressable and of T's kind, as a *T: for a named type such as
// Algo, a pointer to its underlying type.
func as[T any](v reflect.Value) *T {
	return v.Addr().Convert(reflect.TypeFor[*T]()).Interface().(*T)
}
