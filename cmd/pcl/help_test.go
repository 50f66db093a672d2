package main

import (
	"bytes"
	"context"
	"flag"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/sparsepcl/sparsepcl/agent/config"
)

// helpFlag is one flag of a command's -h output.
type helpFlag struct {
	name, arg, def string // def: the "(default ...)" value, unquoted; "" when the help shows none
}

var (
	helpFlagLine = regexp.MustCompile(`^  -(\S+)(?: (.*))?$`)
	helpDefault  = regexp.MustCompile(`\(default ([^()]*)\)$`)
)

// parseHelp returns the flags a -h output lists, in the layout of flag.PrintDefaults.
func parseHelp(t *testing.T, help string) []helpFlag {
	t.Helper()
	var out []helpFlag
	for _, line := range strings.Split(help, "\n") {
		if m := helpFlagLine.FindStringSubmatch(line); m != nil {
			out = append(out, helpFlag{name: m[1], arg: m[2]})
			continue
		}
		if strings.HasPrefix(line, "    \t") && len(out) > 0 {
			if m := helpDefault.FindStringSubmatch(line); m != nil {
				d := m[1]
				if u, err := strconv.Unquote(d); err == nil {
					d = u
				}
				out[len(out)-1].def = d
			}
		}
	}
	return out
}

// value is a value the flag accepts: its default, else the zero value of its type.
func (f helpFlag) value() string {
	switch {
	case f.def != "":
		return f.def
	case f.arg == "":
		return "false" // a boolean
	case f.arg == "int" || f.arg == "float" || f.arg == "uint":
		return "0"
	}
	return ""
}

// goodArg is an argument name as PrintDefaults shows it: a type ("int", "string") or a name
// given in backquotes ("directory", "N", "name=dir"), never a phrase such as "pcl train" that
// a backquoted command in the usage text produces.
var goodArg = regexp.MustCompile(`^([A-Za-z][A-Za-z0-9_.=-]*)?$`)

// Every command's help parses, and no flag has an odd argument name.
func TestHelpArgumentNames(t *testing.T) {
	for _, args := range [][]string{{"envbench"}, {"list"}, {"check"}, {"play"}, {"train"}, {"eval"}, {"compare"}, {"reproduce"}, {"report"}, {"tables"}, {"bench"},
		{"sweep", "plan"}, {"sweep", "run"}, {"sweep", "report"}, {"sweep", "choose"}, {"sweep", "evaluate"}, {"sweep", "k8s"}, {"diagnose"}} {
		name := strings.Join(args, " ")
		var o, e bytes.Buffer
		if code := runMain(context.Background(), append(args, "-h"), &o, &e); code != exitOK {
			t.Errorf("pcl %s -h: exit %d", name, code)
			continue
		}
		flags := parseHelp(t, e.String())
		if len(flags) == 0 {
			t.Errorf("pcl %s -h lists no flags:\n%s", name, e.String())
		}
		for _, f := range flags {
			if !goodArg.MatchString(f.arg) || f.arg == "pcl" {
				t.Errorf("pcl %s -h: -%s has the argument name %q (a backquoted phrase in its usage?)", name, f.name, f.arg)
			}
		}
	}
}

// The help of each command lists exactly the flags it honours. Every listed flag, given its
// default, gets past the command's flag checks to a later usage error (the stopper), and every
// flag of config.RegisterFlags the help leaves out is refused if given.
func TestHelpListsOnlyHonouredFlags(t *testing.T) {
	cfgDefaults := map[string]string{}
	scratch := flag.NewFlagSet("", flag.ContinueOnError)
	c := config.Default()
	c.RegisterFlags(scratch)
	scratch.VisitAll(func(f *flag.Flag) {
		if !config.IsFlagAlias(scratch, f) { // refused or taken with its flag
			cfgDefaults[f.Name] = f.DefValue
		}
	})
	cases := []struct {
		cmd        []string
		stopper    []string // arguments that fail after the flag checks
		stopperMsg string
		configFlag bool     // registers config flags
		mustList   []string // flags the command honours
		mustNot    []string // config flags it does not honour: its own, or of train.Run, or of the mlp family
	}{
		{[]string{"envbench"}, []string{"-rounds", "0"}, "-rounds >= 1", false, []string{"env", "n", "steps", "rounds", "python"}, nil},
		{[]string{"list"}, []string{"--base", "1"}, "--base 1: want >= 2", false, []string{"base"}, nil},
		{[]string{"compare"}, []string{"--seeds", "0"}, "--seeds = 0", true, []string{"bases", "sparse-alpha", "soft-alpha", "jobs", "iters", "batch-size", "learning-rate", "reward-threshold"},
			[]string{"algo", "alpha", "base", "tsallis-q", "net", "grid", "mlp-hidden", "num-envs"}},
		{[]string{"report"}, nil, "give --out and at least one run directory", false, []string{"out"}, nil},
		{[]string{"bench"}, []string{"--measure", "0"}, "--measure = 0", true, []string{"measure", "env", "base", "algo", "alpha", "batch-size", "hidden", "seed",
			"net", "grid", "num-envs", "train-steps", "server"},
			[]string{"iters", "replay", "replay-capacity", "eval-every", "checkpoint-every", "reward-threshold", "stop-at-threshold", "max-loss"}},
		{[]string{"sweep", "plan"}, nil, "--out is required", true, []string{"envs", "bases", "algos", "sparse-alphas", "iters", "grid"},
			[]string{"env", "base", "algo", "alpha", "tsallis-q"}},
		{[]string{"sweep", "run"}, nil, "--dir is required", false, []string{"dir", "index", "jobs"}, nil},
		{[]string{"sweep", "report"}, nil, "--dir is required", false, []string{"dir", "out"}, nil},
		{[]string{"sweep", "choose"}, nil, "--out is required", false, []string{"out"}, nil},
		{[]string{"sweep", "evaluate"}, nil, "give --out and at least one sweep directory", false, []string{"out", "title"}, nil},
		{[]string{"sweep", "k8s"}, nil, "--dir is required", false, []string{"dir", "image", "parallelism", "pod-dir", "memory"}, nil},
		{[]string{"diagnose"}, nil, "--out is required", true, []string{"out", "every", "overlay", "probe", "iters", "replay", "algo"},
			[]string{"eval-every", "eval-episodes", "checkpoint-every", "reward-threshold", "stop-at-threshold", "max-loss", "net", "grid"}},
	}
	for _, tc := range cases {
		name := strings.Join(tc.cmd, " ")
		t.Run(name, func(t *testing.T) {
			var o, e bytes.Buffer
			if code := runMain(context.Background(), append(slices.Clone(tc.cmd), "-h"), &o, &e); code != exitOK {
				t.Fatalf("-h: exit %d", code)
			}
			listed := map[string]bool{}
			for _, f := range parseHelp(t, e.String()) {
				listed[f.name] = true
				args := append(slices.Clone(tc.cmd), "--"+f.name+"="+f.value())
				var o, e bytes.Buffer
				code := runMain(context.Background(), append(args, tc.stopper...), &o, &e)
				if code != exitUsage || !strings.Contains(e.String(), tc.stopperMsg) {
					t.Errorf("pcl %s lists --%s but %v fails with %d %q, not at the later check %q", name, f.name, args[len(tc.cmd):], code, e.String(), tc.stopperMsg)
				}
			}
			for _, f := range tc.mustList {
				if !listed[f] {
					t.Errorf("pcl %s -h does not list --%s", name, f)
				}
			}
			for _, f := range tc.mustNot {
				if listed[f] {
					t.Errorf("pcl %s -h lists --%s, which it does not honour", name, f)
				}
			}
			if !tc.configFlag {
				return
			}
			for f, def := range cfgDefaults {
				if listed[f] {
					continue
				}
				var o, e bytes.Buffer
				code := runMain(context.Background(), append(append(slices.Clone(tc.cmd), "--"+f+"="+def), tc.stopper...), &o, &e)
				if code != exitUsage || !strings.Contains(e.String(), "--"+f+" does not apply") {
					t.Errorf("pcl %s leaves --%s out of its help but takes it: exit %d, stderr %q", name, f, code, e.String())
				}
			}
		})
	}
}

// The older spellings of config flags (--lr of --learning-rate) still parse and set their field,
// but no command's help lists them.
func TestOldFlagSpellings(t *testing.T) {
	for _, args := range [][]string{{"train"}, {"compare"}, {"bench"}, {"diagnose"}, {"sweep", "plan"}} {
		var o, e bytes.Buffer
		if code := runMain(context.Background(), append(slices.Clone(args), "-h"), &o, &e); code != exitOK {
			t.Fatalf("pcl %v -h: exit %d", args, code)
		}
		for _, f := range parseHelp(t, e.String()) {
			if _, old := config.FlagAliases()[f.name]; old {
				t.Errorf("pcl %v -h lists the old spelling --%s", args, f.name)
			}
		}
	}
	for _, tc := range []struct{ alias, value, want string }{
		{"lr", "-1", "--learning-rate = -1"}, {"batch", "-1", "--batch-size = -1"},
		{"replay-batch", "-1", "--replay-batch-size = -1"}, {"threshold", "NaN", "--reward-threshold = NaN"},
	} {
		var o, e bytes.Buffer
		code := runMain(context.Background(), []string{"train", "--" + tc.alias + "=" + tc.value}, &o, &e)
		if code != exitUsage || !strings.Contains(e.String(), tc.want) {
			t.Errorf("pcl train --%s=%s: exit %d, stderr %q; want a usage error %q", tc.alias, tc.value, code, e.String(), tc.want)
		}
	}
}
