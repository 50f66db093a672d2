package config

import (
	"bytes"
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

var updateFlagSet = flag.Bool("update-flagset", false, "rewrite testdata/flagset.golden from this tree's flags")

// flagSetListing is what RegisterFlags gives a program, one flag a line in flag.VisitAll's order:
// the name, the argument name -h shows (flag.UnquoteUsage: the type), the default, the groups of
// flaggroups.go it is in and the help text as given; then the JSON name -> flag map of FieldFlags.
func flagSetListing() []byte {
	var b bytes.Buffer
	fs := flag.NewFlagSet("", flag.ContinueOnError)
	c := Default()
	c.RegisterFlags(fs)
	fs.VisitAll(func(f *flag.Flag) {
		arg, _ := flag.UnquoteUsage(f)
		var groups []string
		for _, g := range []struct {
			name string
			in   func(string) bool
		}{{"mlp", MLPFlag}, {"learner", LearnerFlag}, {"replay", ReplayFlag}} {
			if g.in(f.Name) {
				groups = append(groups, g.name)
			}
		}
		fmt.Fprintf(&b, "-%s %s default=%q groups=%s\n\t%s\n", f.Name, arg, f.DefValue, strings.Join(groups, ","), f.Usage)
	})
	byField := FieldFlags()
	for _, field := range slices.Sorted(maps.Keys(byField)) {
		fmt.Fprintf(&b, "field %s -> %s\n", field, byField[field])
	}
	return b.Bytes()
}

// The config flags, their defaults, help texts, groups and fields are pinned: the golden was
// written from the hand-written registration before the flags were derived from the struct's
// tags, so a change here is a change of what every command shows and takes.
func TestFlagSetGolden(t *testing.T) {
	path := filepath.Join("testdata", "flagset.golden")
	got := flagSetListing()
	if *updateFlagSet {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("the config flags changed (-update-flagset rewrites %s):\n%s", path, lineDiff(string(want), string(got)))
	}
}

// lineDiff lists the lines only in want (-) and only in got (+).
func lineDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var b strings.Builder
	for _, l := range w {
		if !slices.Contains(g, l) {
			b.WriteString("- " + l + "\n")
		}
	}
	for _, l := range g {
		if !slices.Contains(w, l) {
			b.WriteString("+ " + l + "\n")
		}
	}
	return b.String()
}

// Every field's tags make a flag a program can use: a help text, a known group, a name no other
// flag has; and only no_threshold is without a flag.
func TestFlagTags(t *testing.T) {
	seen := map[string]string{}
	for _, s := range configFlags() {
		if s.help == "" {
			t.Errorf("%s (--%s) has no help tag", s.name, s.flag)
		}
		if !slices.Contains([]string{"", "learner", "mlp", "replay"}, s.group) {
			t.Errorf("%s has the unknown group %q", s.name, s.group)
		}
		if other, ok := seen[s.flag]; ok {
			t.Errorf("%s and %s both have the flag --%s", other, s.name, s.flag)
		}
		seen[s.flag] = s.name
	}
	for _, f := range fields(Config{}) {
		if f.tag.Get("flag") == "-" && f.name != "no_threshold" {
			t.Errorf("%s is tagged flag:\"-\"; only no_threshold has no flag", f.name)
		}
	}
}

// A field of a kind no flag takes is refused loudly at registration, naming the field.
func TestRegisterUnknownKind(t *testing.T) {
	v := reflect.ValueOf(&struct{ X []int }{}).Elem().Field(0)
	s := flagSpec{field: field{name: "x", v: v}, flag: "x"}
	defer func() {
		if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), "field x") {
			t.Errorf("registering a []int field: recovered %v, want a panic naming the field", r)
		}
	}()
	s.register(flag.NewFlagSet("", flag.ContinueOnError))
}

// Each flag writes into its own field and no other: setting it to a value other than its default
// changes exactly the field FieldFlags names for it.
func TestEachFlagWritesItsField(t *testing.T) {
	for field, name := range FieldFlags() {
		c := Default()
		fs := flag.NewFlagSet("", flag.ContinueOnError)
		c.RegisterFlags(fs)
		f := fs.Lookup(name)
		other := map[string]string{"true": "false", "false": "true"}[f.DefValue]
		if other == "" {
			other = "7" // parses as every int, float and string flag, and is no flag's default
		}
		if err := fs.Set(name, other); err != nil {
			t.Fatalf("--%s %s: %v", name, other, err)
		}
		diff := Diff(Default(), c)
		if len(diff) != 1 || !strings.HasPrefix(diff[0], field+": ") {
			t.Errorf("--%s %s changed %q, want %s alone", name, other, diff, field)
		}
	}
}

// The older spellings of the four flags that differed from their JSON names still work: each
// writes its field, is reported given as that field, is in its flag's group, and is known as an
// alias on a flag set RegisterFlags filled (and only there).
func TestFlagAliases(t *testing.T) {
	want := map[string]string{"lr": "learning-rate", "batch": "batch-size", "replay-batch": "replay-batch-size", "threshold": "reward-threshold"}
	if got := FlagAliases(); !maps.Equal(got, want) {
		t.Fatalf("FlagAliases() = %v, want %v", got, want)
	}
	byFlag := map[string]string{}
	for field, name := range FieldFlags() {
		byFlag[name] = field
	}
	for alias, name := range want {
		viaAlias, viaName := Default(), Default()
		fa, fn := flag.NewFlagSet("", flag.ContinueOnError), flag.NewFlagSet("", flag.ContinueOnError)
		viaAlias.RegisterFlags(fa)
		viaName.RegisterFlags(fn)
		if err := fa.Parse([]string{"--" + alias + "=7"}); err != nil {
			t.Fatalf("--%s: %v", alias, err)
		}
		if err := fn.Parse([]string{"--" + name + "=7"}); err != nil {
			t.Fatalf("--%s: %v", name, err)
		}
		if viaAlias != viaName || Diff(Default(), viaAlias) == nil {
			t.Errorf("--%s=7 gives %v, --%s=7 %v", alias, Diff(Default(), viaAlias), name, Diff(Default(), viaName))
		}
		if !FieldsGiven(map[string]bool{alias: true})(byFlag[name]) {
			t.Errorf("--%s given does not give %s", alias, byFlag[name])
		}
		if flagGroup(alias) != flagGroup(name) {
			t.Errorf("--%s is in group %q, --%s in %q", alias, flagGroup(alias), name, flagGroup(name))
		}
		if !IsFlagAlias(fa, fa.Lookup(alias)) || IsFlagAlias(fa, fa.Lookup(name)) {
			t.Errorf("IsFlagAlias: --%s %t, --%s %t", alias, IsFlagAlias(fa, fa.Lookup(alias)), name, IsFlagAlias(fa, fa.Lookup(name)))
		}
		own := flag.NewFlagSet("", flag.ContinueOnError)
		own.Int(alias, 0, "a command's own flag of that name")
		if IsFlagAlias(own, own.Lookup(alias)) {
			t.Errorf("a command's own --%s is taken for an alias", alias)
		}
	}
}
