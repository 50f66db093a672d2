package runstore

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// On resume metrics.csv is appended to: the rows before the checkpoint stay byte for byte (even
// in a format the writer would not produce, so a rewrite would show), rows written after the
// checkpoint and a torn last line are cut off, and new rows follow.
func TestResumeMetricsAppends(t *testing.T) {
	head := strings.Join(header, ",") + "\n"
	rows := []string{
		"0,10,0.50,1.0,NaN,2.5,NaN,3,0.5,2,1,NaN,NaN,NaN,NaN,NaN,NaN,0.05\n",
		"1,20,1.00,1.5,1.25,2.0,NaN,3,0.6,2,1,-1.5,-30,0.2,0.01,9,1,0.05\n",
		"2,30,1.50,2.0,NaN,1.5,NaN,3,0.7,3,1,-2.0,-30,0.2,0.02,8,1,0.05\n",
		"3,40,2.00,2.5,NaN,1.0,NaN,3,0.8,3,1,-2.5,-31,0.1,1,0.5,0.5,0.05\n",
	}
	tests := []struct {
		name    string
		content string
		before  int
		kept    int
		dropped int
	}{
		{"clean", head + strings.Join(rows, ""), 4, 4, 0},
		{"rows after the checkpoint", head + strings.Join(rows, ""), 2, 2, 2},
		{"torn last line", head + strings.Join(rows, "") + "4,50,2.5", 4, 4, 1},
		{"both", head + strings.Join(rows, "") + "4,5", 3, 3, 2},
		{"header only", head, 0, 0, 0},
	}
	for _, tc := range tests {
		path := filepath.Join(t.TempDir(), MetricsFile)
		if err := os.WriteFile(path, []byte(tc.content), 0o644); err != nil {
			t.Fatal(err)
		}
		mw, kept, dropped, err := resumeMetrics(path, tc.before)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if len(kept) != tc.kept || dropped != tc.dropped {
			t.Errorf("%s: kept %d dropped %d, want %d %d", tc.name, len(kept), dropped, tc.kept, tc.dropped)
		}
		next := Row{Iteration: tc.kept, EnvSteps: 99, MeanReward: 1, GreedyReward: math.NaN(), ReplayLoss: math.NaN()}
		if err := mw.Write(next); err != nil {
			t.Fatal(err)
		}
		if err := mw.Close(); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		want := head + strings.Join(rows[:tc.kept], "")
		if !strings.HasPrefix(string(got), want) {
			t.Errorf("%s: the kept rows were not preserved byte for byte:\n%s", tc.name, got)
		}
		back, err := ReadMetrics(path)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if len(back) != tc.kept+1 || back[tc.kept].EnvSteps != 99 {
			t.Errorf("%s: file has %d rows after the append, want %d ending with the new one", tc.name, len(back), tc.kept+1)
		}
	}
	// A corrupt row in the middle is an error naming the line, not a silent cut.
	path := filepath.Join(t.TempDir(), MetricsFile)
	if err := os.WriteFile(path, []byte(head+rows[0]+"x,1,2\n"+rows[2]), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := resumeMetrics(path, 4); err == nil || !strings.Contains(err.Error(), "line 3") {
		t.Errorf("corrupt row: %v", err)
	}
}

// A metrics file written before the diagnostics columns is read with them NaN, and a resume
// rewrites it in the current layout (the kept rows' values unchanged) before appending. Columns
// are found by name, so a file with some of the diagnostics in another order reads too.
func TestResumeRewritesLegacyMetrics(t *testing.T) {
	legacyHead := strings.Join(header[:requiredColumns], ",") + "\n"
	legacy := legacyHead + "0,10,0.5,1,NaN,2.5,NaN,3,0.5,0,7\n1,20,1,1.5,1.25,2,NaN,3,0.6,0,6\n2,30,1.5,2,NaN,1.5,NaN,3,0.7,0,5\n"
	path := filepath.Join(t.TempDir(), MetricsFile)
	if err := os.WriteFile(path, []byte(legacy), 0o644); err != nil {
		t.Fatal(err)
	}
	old, err := ReadMetrics(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(old) != 3 || old[1].GreedyReward != 1.25 || old[2].GradNorm != 5 || !math.IsNaN(old[0].ValueMean) || !math.IsNaN(old[0].ClipScale) {
		t.Fatalf("legacy rows read as %+v", old)
	}
	mw, kept, dropped, err := resumeMetrics(path, 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(kept) != 2 || dropped != 1 {
		t.Errorf("kept %d dropped %d, want 2 1", len(kept), dropped)
	}
	next := Row{Iteration: 2, EnvSteps: 99, GreedyReward: math.NaN(), Diagnostics: Diagnostics{ValueMean: -3, ReturnDiscounted: -40, ClipScale: 0.5}}
	if err := mw.Write(next); err != nil {
		t.Fatal(err)
	}
	if err := mw.Close(); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(got), strings.Join(header, ",")+"\n") {
		t.Errorf("the rewritten file does not have the current header:\n%s", got)
	}
	back, err := ReadMetrics(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(back) != 3 || back[1].GreedyReward != 1.25 || back[0].GradNorm != 7 || !math.IsNaN(back[1].ValueMean) || back[2].ValueMean != -3 || back[2].ClipScale != 0.5 {
		t.Errorf("after the resume: %+v", back)
	}
}

func TestMetricsColumnsByName(t *testing.T) {
	head := strings.Join(header[:requiredColumns], ",") + ",clip_scale,value_mean\n"
	path := filepath.Join(t.TempDir(), MetricsFile)
	if err := os.WriteFile(path, []byte(head+"0,10,0.5,1,NaN,2.5,NaN,3,0.5,0,7,0.25,-4\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	rows, err := ReadMetrics(path)
	if err != nil {
		t.Fatal(err)
	}
	if r := rows[0]; r.ClipScale != 0.25 || r.ValueMean != -4 || !math.IsNaN(r.ReturnDiscounted) || r.GradNorm != 7 {
		t.Errorf("row %+v", r)
	}
	for _, bad := range []string{"iteration,env_steps\n", strings.Join(header[:requiredColumns], ",") + ",bogus\n", "env_steps," + strings.Join(header[:requiredColumns], ",") + "\n"} {
		if err := os.WriteFile(path, []byte(bad), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := ReadMetrics(path); err == nil || !strings.Contains(err.Error(), "unexpected header") {
			t.Errorf("header %q: %v", bad, err)
		}
	}
}

// resumeMetrics opens the metrics file at path for appending the rows of iteration before and on,
// as a resumed run does: the kept rows, and how many were cut off.
func resumeMetrics(path string, before int) (*Writer, []Row, int, error) {
	sc, err := scanMetrics(path, before)
	if err != nil {
		return nil, nil, 0, err
	}
	mw, err := sc.Open(nil)
	if err != nil {
		return nil, nil, 0, err
	}
	return mw, sc.Kept, sc.Dropped, nil
}
