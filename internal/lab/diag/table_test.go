package diag

import (
	"bytes"
	"math"
	"strings"
	"testing"
)

// probeTable is a probe of inspections at 0, 5, ..., 30 whose columns are constant except where
// set: the reward of the last five inspections is reward, and write_frac at 30 is early.
func probeTable(reward, early float64, pCorrect []float64) Table {
	t := Table{}
	for i := 0; i <= 6; i++ {
		t["iteration"] = append(t["iteration"], float64(5*i))
		r, w := -1.0, 0.5
		if i >= 2 {
			r = reward
		}
		if i == 6 {
			w = early
		}
		t["mean_reward"] = append(t["mean_reward"], r)
		t["write_frac"] = append(t["write_frac"], w)
		t["correct_in_support"] = append(t["correct_in_support"], 0.25)
		t["p_write"] = append(t["p_write"], 0.1)
		t["p_correct_given_write"] = append(t["p_correct_given_write"], pCorrect[i])
		t["symbols_in_support"] = append(t["symbols_in_support"], 3)
		t["support"] = append(t["support"], 12)
	}
	return t
}

func TestSummariseLever(t *testing.T) {
	nan := math.NaN()
	a := probeTable(-0.2, 0.1, []float64{0, 0, nan, 0.5, nan, 0.5, 0.5})
	b := probeTable(-0.6, 0.3, []float64{0, 0, nan, nan, nan, nan, nan})
	l, err := SummariseLever("explore", []Table{a, b})
	if err != nil {
		t.Fatal(err)
	}
	// The write column's last five inspections are four 0.5s and the value at 30.
	want := Lever{Name: "explore", Seeds: 2, Iters: 31, WriteEarly: 0.2, CorrectInSupportEarly: 0.25, Reward: -0.4, RewardStd: 0.2,
		Write: ((4*0.5+0.1)/5 + (4*0.5+0.3)/5) / 2, PWrite: 0.1, PCorrectGivenWrite: 0.5, Symbols: 3, Support: 12}
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"write@30", l.WriteEarly, want.WriteEarly}, {"correct in support@30", l.CorrectInSupportEarly, want.CorrectInSupportEarly},
		{"reward", l.Reward, want.Reward}, {"reward std", l.RewardStd, want.RewardStd}, {"write", l.Write, want.Write},
		{"p(write)", l.PWrite, want.PWrite}, {"p(correct | write), NaNs left out, a seed with none too", l.PCorrectGivenWrite, want.PCorrectGivenWrite},
		{"symbols", l.Symbols, want.Symbols}, {"support", l.Support, want.Support},
	} {
		if math.Abs(c.got-c.want) > 1e-12 {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	if l.Seeds != 2 || l.Iters != 31 {
		t.Errorf("seeds %d, iters %d, want 2 and 31", l.Seeds, l.Iters)
	}
	var buf bytes.Buffer
	if err := WriteLeverTable(&buf, []Lever{l}); err != nil {
		t.Fatal(err)
	}
	if row := "| explore | 2 | 31 | 0.20 | 0.25 | -0.40 ± 0.20 | 0.44 | 0.10 | 0.50 | 3.0 | 12.0 |"; !strings.Contains(buf.String(), row) {
		t.Errorf("table\n%s\nlacks the row\n%s", buf.String(), row)
	}

	short := probeTable(0, 0, []float64{0, 0, 0, 0, 0, 0, 0})
	for k := range short {
		short[k] = short[k][:5] // inspections 0-20: no iteration 30
	}
	if _, err := SummariseLever("short", []Table{short}); err == nil || !strings.Contains(err.Error(), "iteration 30") {
		t.Errorf("a probe without iteration 30: %v", err)
	}
	if _, err := SummariseLever("none", nil); err == nil {
		t.Error("a lever without probes was summarised")
	}
	ragged := probeTable(0, 0, []float64{0, 0, 0, 0, 0, 0, 0})
	ragged["support"] = ragged["support"][:3]
	if _, err := SummariseLever("ragged", []Table{ragged}); err == nil || !strings.Contains(err.Error(), "support") {
		t.Errorf("a ragged probe: %v", err)
	}
}
