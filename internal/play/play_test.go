package play

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/sparsepcl/sparsepcl/envs"
)

func TestParseMove(t *testing.T) {
	comps := []int64{2, 2, 5} // a tape task at base 5: (move, write, symbol)
	radix, err := envs.NewMixedRadix(comps...)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		line string
		want []int64 // components, nil: an error
		err  string
	}{
		{"l", []int64{0, 0, 0}, ""},
		{"right", []int64{1, 0, 0}, ""},
		{"r w 3", []int64{1, 1, 3}, ""},
		{"L W b", []int64{0, 1, 1}, ""},
		{"7", []int64{1, 1, 1}, ""},
		{"u", nil, `unknown move "u" (l, r)`},
		{"r w 9", nil, "symbol 9 out of range [0, 5)"},
		{"r w Z", nil, `"z" is not a symbol of base 5`},
		{"99", nil, "action 99 out of range [0, 20)"},
		{"r x", nil, `want "<move>"`},
	}
	for _, tc := range cases {
		a, err := ParseMove(tc.line, radix, comps)
		if tc.want == nil {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: %v, want an error with %q", tc.line, err, tc.err)
			}
			continue
		}
		want, _ := radix.Combine(tc.want)
		if err != nil || a != want {
			t.Errorf("%q: %d, %v; want %d", tc.line, a, err, want)
		}
	}
}

func TestParseInputAndActions(t *testing.T) {
	if got, err := ParseInput("1, 2,3", false); err != nil || !reflect.DeepEqual(got, []int64{1, 2, 3}) {
		t.Errorf("tape input: %v, %v", got, err)
	}
	if got, err := ParseInput("2,1;1,0", true); err != nil || !reflect.DeepEqual(got, [][]int64{{2, 1}, {1, 0}}) {
		t.Errorf("grid input: %v, %v", got, err)
	}
	if _, err := ParseInput("1,x", false); err == nil {
		t.Error("a bad input: no error")
	}
	if got, err := ParseActions("15, 7"); err != nil || !reflect.DeepEqual(got, []int64{15, 7}) {
		t.Errorf("actions: %v, %v", got, err)
	}
	if _, err := ParseActions("1,x"); err == nil || !strings.Contains(err.Error(), "item 2") {
		t.Errorf("a bad action list: %v", err)
	}
}

// Without a delay the pacer waits for a line per step, stops at "q", and plays on without
// pausing once its input ends.
func TestPacer(t *testing.T) {
	ctx := context.Background()
	p := NewPacer(ctx, strings.NewReader("\n\nq\n"), 0)
	for i, want := range []bool{true, true, false} {
		if more, err := p.Wait(ctx); more != want || err != nil {
			t.Errorf("step %d: %v, %v; want %v", i, more, err, want)
		}
	}
	p = NewPacer(ctx, strings.NewReader(""), 0)
	for i := range 3 {
		if more, err := p.Wait(ctx); !more || err != nil {
			t.Errorf("after the input ended, step %d: %v, %v", i, more, err)
		}
	}
}
