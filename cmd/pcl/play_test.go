package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

func TestList(t *testing.T) {
	var out, errOut bytes.Buffer
	if err := runList(context.Background(), []string{"--base", "10"}, &out, &errOut); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Copy-v0", "Discrete(11)", "Discrete(40)", "ReversedAddition3-v0", "Discrete(80)"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("list lacks %q:\n%s", want, out.String())
		}
	}
	if err := runList(context.Background(), []string{"--base", "1"}, &out, &errOut); err == nil {
		t.Error("--base 1 accepted")
	}
}

func TestPlay(t *testing.T) {
	tests := []struct {
		name  string
		args  []string
		stdin string
		want  []string
		err   string
	}{
		{
			name: "replay a wrong write",
			args: []string{"--env", "Copy-v0", "--base", "5", "--input", "1,2,3", "--actions", "7,0,1,11,19"},
			want: []string{"reward +1.0", "reward -0.5", "episode over: return +1.5"},
		},
		{
			name:  "interactive moves solve Copy",
			args:  []string{"--env", "Copy-v0", "--input", "1,2"},
			stdin: "r w 1\nr w C\nq\n",
			want:  []string{"write B", "episode over: return +2.0"},
		},
		{
			name:  "bad moves are reported, not fatal",
			args:  []string{"--env", "Copy-v0", "--input", "1,2"},
			stdin: "u\nr w 9\n99\nx y\nr w B\n",
			want:  []string{`unknown move "u"`, "symbol 9 out of range [0, 5)", "action 99 out of range [0, 20)", `unknown move "x"`, "reward +1.0"},
		},
		{
			name:  "grid moves",
			args:  []string{"--env", "ReversedAddition-v0", "--input", "2,1;1,0"},
			stdin: "d\nr w 0\nn\n",
			want:  []string{"move down", "reward +1.0", "step 0"},
		},
		{name: "unknown env", args: []string{"--env", "Nope-v0"}, err: "Copy-v0"},
		{name: "bad input", args: []string{"--input", "1,7"}, err: "out of range"},
		{name: "bad action list", args: []string{"--actions", "1,x"}, err: "not an integer"},
		{name: "action out of range", args: []string{"--actions", "20"}, err: "out of range"},
	}
	for _, tc := range tests {
		var out, errOut bytes.Buffer
		err := playCmd(context.Background(), tc.args, strings.NewReader(tc.stdin), &out, &errOut)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: error %v, want %q", tc.name, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		for _, w := range tc.want {
			if !strings.Contains(out.String(), w) {
				t.Errorf("%s: output lacks %q:\n%s", tc.name, w, out.String())
			}
		}
	}
}
