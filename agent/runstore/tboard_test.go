package runstore

import (
	"math"
	"strings"
	"testing"

	"github.com/sparsepcl/sparsepcl/agent/internal/tfevents"
)

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
			files, err := tfevents.ReadDir(dir)
			if err != nil {
				t.Fatal(err)
			}
			if len(files) != 1 || len(files[0]) != 3 { // file version, session start, the row
				t.Fatalf("events %+v", files)
			}
			ev := files[0][2]
			if ev.Step != tc.step || len(ev.Scalars) != len(tc.want) {
				t.Fatalf("event %+v, want step %d scalars %v", ev, tc.step, tc.want)
			}
			for k, v := range tc.want {
				if ev.Scalars[k] != v {
					t.Errorf("%s = %v, want %v", k, ev.Scalars[k], v)
				}
			}
		})
	}
	var none *tboard // a run without TensorBoard
	if err := none.row(header, []string{"1"}); err != nil || none.Close() != nil {
		t.Errorf("nil tboard: %v", err)
	}
}
