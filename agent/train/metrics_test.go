package train

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
		"0,10,0.50,1.0,NaN,2.5,NaN,3,0.5,2,1\n",
		"1,20,1.00,1.5,1.25,2.0,NaN,3,0.6,2,1\n",
		"2,30,1.50,2.0,NaN,1.5,NaN,3,0.7,3,1\n",
		"3,40,2.00,2.5,NaN,1.0,NaN,3,0.8,3,1\n",
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
		if err := mw.write(next); err != nil {
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
