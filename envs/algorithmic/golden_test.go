package algorithmic

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/sparsepcl/sparsepcl/envs"
)

type goldenStep struct {
	move, write, char, index int64
	obs                      int64
	reward                   float64
	terminated               bool
}

type golden struct {
	task  Task
	base  int
	input any
	reset int64
	steps []goldenStep
}

func atoi(t *testing.T, s string) int64 {
	t.Helper()
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func loadGolden(t *testing.T, path string) golden {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var g golden
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		key, rest, _ := strings.Cut(line, " ")
		switch key {
		case "env":
			if g.task, err = TaskByID(rest); err != nil {
				t.Fatal(err)
			}
		case "base":
			g.base = int(atoi(t, rest))
		case "input":
			if g.task.Grid() {
				var cols [][]int64
				for _, col := range strings.Fields(rest) {
					var c []int64
					for _, d := range strings.Split(col, ",") {
						c = append(c, atoi(t, d))
					}
					cols = append(cols, c)
				}
				g.input = cols
			} else {
				var syms []int64
				for _, d := range strings.Fields(rest) {
					syms = append(syms, atoi(t, d))
				}
				g.input = syms
			}
		case "reset":
			g.reset = atoi(t, rest)
		case "step":
			parts := strings.Split(rest, "|")
			if len(parts) != 3 {
				t.Fatalf("%s: bad step line %q", path, line)
			}
			a, out := strings.Fields(parts[0]), strings.Fields(parts[2])
			r, err := strconv.ParseFloat(out[1], 64)
			if err != nil {
				t.Fatal(err)
			}
			g.steps = append(g.steps, goldenStep{
				move: atoi(t, a[0]), write: atoi(t, a[1]), char: atoi(t, a[2]),
				index: atoi(t, strings.TrimSpace(parts[1])), obs: atoi(t, out[0]), reward: r, terminated: out[2] == "true",
			})
		default:
			t.Fatalf("%s: unknown key %q", path, key)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return g
}

// TestGoldenTraces replays hand-computed traces through the single Env (combined and factored
// actions) and through VecEnvs in both autoreset modes.
func TestGoldenTraces(t *testing.T) {
	files, err := filepath.Glob("testdata/*.trace")
	if err != nil || len(files) < 6 {
		t.Fatalf("golden traces: %v, %d files", err, len(files))
	}
	for _, path := range files {
		g := loadGolden(t, path)
		t.Run(filepath.Base(path), func(t *testing.T) {
			for _, factored := range []bool{false, true} {
				env, err := NewEnv(Config{Task: g.task, Base: g.base, FactoredActions: factored})
				if err != nil {
					t.Fatal(err)
				}
				obs, _, err := env.Reset(nil, map[string]any{OptInput: g.input})
				if err != nil || obs.(int64) != g.reset {
					t.Fatalf("reset: obs %v err %v, want %d", obs, err, g.reset)
				}
				for i, s := range g.steps {
					idx, err := env.Combine(s.move, s.write, s.char)
					if err != nil || idx != s.index {
						t.Fatalf("step %d: combine = %d, %v; want %d", i+1, idx, err, s.index)
					}
					var action any = idx
					if factored {
						action = []any{s.move, s.write, s.char}
					}
					obs, r, term, trunc, _, err := env.Step(action)
					if err != nil || obs.(int64) != s.obs || r != s.reward || term != s.terminated || trunc {
						t.Fatalf("factored=%v step %d: got obs %v r %v term %v trunc %v err %v; want %+v\n%s", factored, i+1, obs, r, term, trunc, err, s, env.Render())
					}
				}
			}
			for _, mode := range []envs.AutoresetMode{envs.AutoresetNextStep, envs.AutoresetDisabled} {
				v, err := NewVecEnv(Config{Task: g.task, Base: g.base, Autoreset: mode}, 1)
				if err != nil {
					t.Fatal(err)
				}
				ctx := context.Background()
				obs, _, err := v.Reset(ctx, envs.ResetRequest{Options: map[string]any{OptInput: g.input}})
				if err != nil || obs.Ints[0] != g.reset {
					t.Fatalf("vec reset: %v %v", obs, err)
				}
				act := envs.NewArray(envs.Int64, 1)
				for i, s := range g.steps {
					act.Ints[0] = s.index
					res, err := v.Step(ctx, act)
					if err != nil || res.Obs.Ints[0] != s.obs || res.Rewards[0] != s.reward || res.Terminated[0] != s.terminated || res.Truncated[0] {
						t.Fatalf("vec %v step %d: got %+v err %v; want %+v", mode, i+1, res, err, s)
					}
				}
			}
		})
	}
}
