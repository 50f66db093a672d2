package sweep

import (
	"errors"
	"testing"

	"github.com/sparsepcl/sparsepcl/agent/config"
)

// A cell's invalid config is a CellError: renamed for a program's flags, the fields the cell sets
// (from the sweep's own options) keep their JSON names and the base config's take the new names.
func TestCellErrorNamesOnlyBaseFields(t *testing.T) {
	flag := func(field string) string { return "--" + field }
	cases := []struct {
		name       string
		cell       Cell
		batch      int
		error, txt string
	}{
		{"cell alpha", Cell{Env: "Copy-v0", Base: 5, Algo: "soft", Alpha: -1}, 8,
			"config: alpha = -1: must be > 0", "alpha = -1: must be > 0"},
		{"base batch", Cell{Env: "Copy-v0", Base: 5, Algo: "soft", Alpha: 0.1}, 0,
			"config: batch_size = 0: must be >= 1", "--batch_size = 0: must be >= 1"},
	}
	for _, tc := range cases {
		base := tiny()
		base.BatchSize = tc.batch
		_, err := Plan(Spec{Base: base, Cells: []Cell{tc.cell}, Seeds: 1, FirstSeed: 1})
		var ce *CellError
		if !errors.As(err, &ce) || !errors.As(err, new(*config.FieldError)) {
			t.Fatalf("%s: error %v, want a CellError over a config.FieldError", tc.name, err)
		}
		prefix := "sweep: cell {Env:Copy-v0 Base:5 Algo:soft Alpha:" + map[bool]string{true: "-1", false: "0.1"}[tc.cell.Alpha < 0] + " Q:0 Iters:0}: "
		if got := err.Error(); got != prefix+tc.error {
			t.Errorf("%s: Error() = %q, want %q", tc.name, got, prefix+tc.error)
		}
		if got := config.Renamed(err, flag); got != prefix+tc.txt {
			t.Errorf("%s: renamed %q, want %q", tc.name, got, prefix+tc.txt)
		}
	}
}
