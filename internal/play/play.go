// Package play steps an environment by moves typed on a terminal: it reads the moves of the
// algorithmic tasks ("r w 3": move right, write symbol 3), their symbols and explicit inputs, and
// keeps an episode going (reset, step, render, the running return) for `pcl play`.
package play

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/sparsepcl/sparsepcl/envs"
)

// Help says how to type moves.
const Help = `Moves: l, r (grid also u, d) move the read head; add "w C" to write symbol C first
(a number, or a letter A.. when base <= 26): e.g. "r w 3", "l w B". A bare number is a combined
action index. "n" starts a new episode, "q" quits.`

// Playable is an env that can be played from a terminal: its actions combine components (move,
// write, symbol) and it renders itself as text.
type Playable interface {
	envs.Env
	envs.ActionFactors
	Render() string
}

// Session is one env played from a terminal, episode after episode.
type Session struct {
	env   Playable
	comps []int64 // (moves, 2, base)
	radix envs.MixedRadix
	seed  *int64 // of the next reset; only the first is seeded
	opts  map[string]any
	total float64
	out   io.Writer
}

// NewSession plays env, writing its renderings to out. seed (0: random) seeds the first episode;
// input, as ParseInput reads it ("" for none), is the input of every episode.
func NewSession(env envs.Env, seed int64, input string, out io.Writer) (*Session, error) {
	p, ok := env.(Playable)
	if !ok {
		return nil, errors.New("this environment cannot be played from the terminal")
	}
	s := &Session{env: p, comps: p.ActionComponents(), opts: map[string]any{}, out: out}
	var err error
	if s.radix, err = envs.NewMixedRadix(s.comps...); err != nil {
		return nil, fmt.Errorf("play: %w", err)
	}
	if input != "" {
		in, err := ParseInput(input, s.comps[0] == 4)
		if err != nil {
			return nil, fmt.Errorf("--input: %w", err)
		}
		s.opts["input"] = in
	}
	if seed != 0 {
		s.seed = &seed
	}
	return s, nil
}

// Reset starts a new episode and renders it.
func (s *Session) Reset() error {
	if _, _, err := s.env.Reset(s.seed, s.opts); err != nil {
		return err
	}
	s.seed, s.total = nil, 0
	fmt.Fprint(s.out, s.env.Render())
	return nil
}

// Step takes the combined action a and renders the result; at the end of an episode it prints
// the return and starts the next one.
func (s *Session) Step(a int64) error {
	_, r, term, trunc, _, err := s.env.Step(a)
	if err != nil {
		return err
	}
	s.total += r
	fmt.Fprint(s.out, s.env.Render())
	if term || trunc {
		fmt.Fprintf(s.out, "episode over: return %+.1f\n\n", s.total)
		return s.Reset()
	}
	return nil
}

// Move takes the action a typed line names (see ParseMove).
func (s *Session) Move(line string) error {
	a, err := ParseMove(line, s.radix, s.comps)
	if err != nil {
		return err
	}
	return s.Step(a)
}

// Lines delivers the lines of r until EOF or until ctx ends.
func Lines(ctx context.Context, r io.Reader) <-chan string {
	ch := make(chan string)
	go func() {
		defer close(ch)
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			select {
			case ch <- sc.Text():
			case <-ctx.Done():
				return
			}
		}
	}()
	return ch
}

// moveIndex is the move component of a move's name (false for an unknown name).
func moveIndex(name string) (int64, bool) {
	switch name {
	case "l", "left":
		return 0, true
	case "r", "right":
		return 1, true
	case "u", "up":
		return 2, true
	case "d", "down":
		return 3, true
	}
	return 0, false
}

// ParseMove reads "r", "l w 3", "u w B" or a bare combined index into a combined action of
// radix, whose components comps are (moves, 2, base).
func ParseMove(line string, radix envs.MixedRadix, comps []int64) (int64, error) {
	if n, err := strconv.ParseInt(line, 10, 64); err == nil {
		if n < 0 || n >= radix.Size() {
			return 0, fmt.Errorf("action %d out of range [0, %d)", n, radix.Size())
		}
		return n, nil
	}
	f := strings.Fields(strings.ToLower(line))
	if len(f) == 0 {
		return 0, errors.New("no move")
	}
	move, ok := moveIndex(f[0])
	if !ok || move >= comps[0] {
		return 0, fmt.Errorf("unknown move %q (%s)", f[0], strings.Join([]string{"l", "r", "u", "d"}[:comps[0]], ", "))
	}
	write, char := int64(0), int64(0)
	switch {
	case len(f) == 1:
	case len(f) == 3 && (f[1] == "w" || f[1] == "write"):
		write = 1
		var err error
		if char, err = ParseSymbol(f[2], comps[2]); err != nil {
			return 0, err
		}
	default:
		return 0, errors.New(`want "<move>" or "<move> w <symbol>", e.g. "r w 3"`)
	}
	return radix.Combine([]int64{move, write, char})
}

// ParseActions reads a comma-separated list of combined action indices.
func ParseActions(list string) ([]int64, error) {
	var out []int64
	for i, f := range strings.Split(list, ",") {
		a, err := strconv.ParseInt(strings.TrimSpace(f), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("item %d: %q is not an integer", i+1, f)
		}
		out = append(out, a)
	}
	return out, nil
}

// ParseSymbol reads a symbol of base: a number, or a letter A.. when base <= 26.
func ParseSymbol(s string, base int64) (int64, error) {
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		if n < 0 || n >= base {
			return 0, fmt.Errorf("symbol %d out of range [0, %d)", n, base)
		}
		return n, nil
	}
	if len(s) == 1 && base <= 26 {
		if c := int64(strings.ToUpper(s)[0]) - 'A'; c >= 0 && c < base {
			return c, nil
		}
	}
	return 0, fmt.Errorf("%q is not a symbol of base %d", s, base)
}

// ParseInput reads an explicit input: "1,2,3" (symbols on a tape) or, for a grid, "2,1;1,0"
// (columns).
func ParseInput(s string, grid bool) (any, error) {
	ints := func(part string) ([]int64, error) {
		var out []int64
		for f := range strings.SplitSeq(part, ",") {
			n, err := strconv.ParseInt(strings.TrimSpace(f), 10, 64)
			if err != nil {
				return nil, fmt.Errorf("%q is not an integer", f)
			}
			out = append(out, n)
		}
		return out, nil
	}
	if !grid {
		return ints(s)
	}
	var cols [][]int64
	for c := range strings.SplitSeq(s, ";") {
		col, err := ints(c)
		if err != nil {
			return nil, err
		}
		cols = append(cols, col)
	}
	return cols, nil
}
