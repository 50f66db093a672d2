package train

import (
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sparsepcl/sparsepcl/agent/config"
	"github.com/sparsepcl/sparsepcl/internal/tfevents"
	"google.golang.org/protobuf/encoding/protowire"
)

// tbEvent is what the tests read back from an event: its step and its scalars (tag -> value), or
// whether it is a SessionLog or a text summary.
type tbEvent struct {
	step    int64
	scalars map[string]float32
	session bool
	text    string
}

// decodeEvent decodes the fields of a tensorflow.Event that the run writes.
func decodeEvent(t *testing.T, b []byte) tbEvent {
	t.Helper()
	ev := tbEvent{scalars: map[string]float32{}}
	fields(t, b, func(num protowire.Number, v uint64, sub []byte) {
		switch num {
		case 2:
			ev.step = int64(v)
		case 7:
			ev.session = true
		case 5:
			fields(t, sub, func(_ protowire.Number, _ uint64, val []byte) {
				var tag string
				var x float32
				simple := false
				fields(t, val, func(num protowire.Number, v uint64, s []byte) {
					switch num {
					case 1:
						tag = string(s)
					case 2:
						x, simple = math.Float32frombits(uint32(v)), true
					case 8:
						fields(t, s, func(num protowire.Number, _ uint64, s []byte) {
							if num == 8 {
								ev.text = string(s)
							}
						})
					}
				})
				if simple {
					ev.scalars[tag] = x
				}
			})
		}
	})
	return ev
}

// fields calls f with each field of the message b: varints and fixed values in v, bytes in sub.
func fields(t *testing.T, b []byte, f func(num protowire.Number, v uint64, sub []byte)) {
	t.Helper()
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			t.Fatalf("bad tag: %v", protowire.ParseError(n))
		}
		b = b[n:]
		var v uint64
		var sub []byte
		switch typ {
		case protowire.VarintType:
			v, n = protowire.ConsumeVarint(b)
		case protowire.Fixed32Type:
			var x uint32
			x, n = protowire.ConsumeFixed32(b)
			v = uint64(x)
		case protowire.Fixed64Type:
			v, n = protowire.ConsumeFixed64(b)
		case protowire.BytesType:
			sub, n = protowire.ConsumeBytes(b)
		default:
			t.Fatalf("unexpected wire type %d", typ)
		}
		if n < 0 {
			t.Fatalf("bad field %d: %v", num, protowire.ParseError(n))
		}
		b = b[n:]
		f(num, v, sub)
	}
}

// readEvents reads every event file of dir, in name order (the order they were written in).
func readEvents(t *testing.T, dir string) [][]tbEvent {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(dir, tfevents.FilePrefix+"*"))
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(paths)
	var out [][]tbEvent
	for _, p := range paths {
		fh, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		recs, err := tfevents.ReadRecords(fh)
		fh.Close()
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		var evs []tbEvent
		for _, r := range recs {
			evs = append(evs, decodeEvent(t, r))
		}
		out = append(out, evs)
	}
	return out
}

func TestTBoardRow(t *testing.T) {
	header := []string{"iteration", "loss", "greedy_reward", "new_column"}
	for _, tc := range []struct {
		name string
		rec  []string
		step int64
		want map[string]float32
		err  string
	}{
		{"all", []string{"3", "0.5", "2", "-1"}, 3, map[string]float32{"metrics/loss": 0.5, "metrics/greedy_reward": 2, "metrics/new_column": -1}, ""},
		{"NaN left out", []string{"4", "0.25", "NaN", "+Inf"}, 4, map[string]float32{"metrics/loss": 0.25, "metrics/new_column": float32(math.Inf(1))}, ""},
		{"short", []string{"5", "1"}, 0, nil, "2 cells for 4 columns"},
		{"bad step", []string{"x", "1", "1", "1"}, 0, nil, `iteration "x"`},
		{"bad cell", []string{"6", "1", "one", "1"}, 0, nil, `greedy_reward "one"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			tb, err := openTBoard(dir, 0)
			if err != nil {
				t.Fatal(err)
			}
			err = tb.row(header, tc.rec)
			if cerr := tb.Close(); cerr != nil {
				t.Fatal(cerr)
			}
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one containing %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			files := readEvents(t, dir)
			if len(files) != 1 || len(files[0]) != 3 { // file version, session start, the row
				t.Fatalf("events %+v", files)
			}
			ev := files[0][2]
			if ev.step != tc.step || len(ev.scalars) != len(tc.want) {
				t.Fatalf("event %+v, want step %d scalars %v", ev, tc.step, tc.want)
			}
			for k, v := range tc.want {
				if ev.scalars[k] != v {
					t.Errorf("%s = %v, want %v", k, ev.scalars[k], v)
				}
			}
		})
	}
	var none *tboard // a run without TensorBoard
	if err := none.row(header, []string{"1"}); err != nil || none.Close() != nil {
		t.Errorf("nil tboard: %v", err)
	}
}

// A run writes one event file per process: the config and run.json as text, every metrics row at its
// iteration, and on resume a SessionLog START at the iteration it resumes from.
func TestRunWritesEventFiles(t *testing.T) {
	cfg := config.Default()
	cfg.Base, cfg.BatchSize, cfg.EvalEvery, cfg.EvalEpisodes, cfg.CheckpointEvery, cfg.Iters = 2, 8, 2, 2, 2, 3
	dir := t.TempDir()
	if _, err := quickRun(t, dir, cfg, false); err != nil {
		t.Fatal(err)
	}
	cfg.Iters = 5
	sum, err := quickRun(t, dir, cfg, true)
	if err != nil {
		t.Fatal(err)
	}
	files := readEvents(t, dir)
	if len(files) != 2 {
		t.Fatalf("%d event files, want one per process", len(files))
	}
	for i, from := range []int64{0, 3} {
		evs := files[i]
		if len(evs) < 3 || !evs[1].session || evs[1].step != from || !strings.Contains(evs[2].text, `"env": "Copy-v0"`) {
			t.Fatalf("file %d starts %+v, want the version, a session start at %d and the config", i, evs[:min(3, len(evs))], from)
		}
		var rows []tbEvent
		for _, ev := range evs[3:] {
			if len(ev.scalars) > 0 {
				rows = append(rows, ev)
			} else if !strings.Contains(ev.text, `"sessions"`) {
				t.Errorf("file %d: unexpected event %+v", i, ev)
			}
		}
		want := sum.Rows[from:][:len(rows)]
		if len(rows) != []int{3, 2}[i] {
			t.Fatalf("file %d: %d rows", i, len(rows))
		}
		for j, ev := range rows {
			r := want[j]
			if ev.step != int64(r.Iteration) || ev.scalars["metrics/loss"] != float32(r.Loss) || ev.scalars["metrics/env_steps"] != float32(r.EnvSteps) {
				t.Errorf("file %d event %+v, row %+v", i, ev, r)
			}
			if _, ok := ev.scalars["metrics/greedy_reward"]; ok != !math.IsNaN(r.GreedyReward) {
				t.Errorf("file %d iteration %d: greedy_reward present %v, row %v", i, r.Iteration, ok, r.GreedyReward)
			}
		}
	}
}
