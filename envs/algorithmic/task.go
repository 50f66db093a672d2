package algorithmic

import (
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/sparsepcl/sparsepcl/envs"
)

// Task is one of the algorithmic tasks.
type Task int

// The tasks, in the order of the paper.
const (
	Copy Task = iota
	DuplicatedInput
	RepeatCopy
	Reverse
	ReversedAddition
	ReversedAddition3
)

// MaxMinLength is the largest min_length the curriculum reaches; inputs are at most 2 longer.
const MaxMinLength = 30

type taskSpec struct {
	id             string
	defaultBase    int
	startMinLength int
	rows           int // 0 for tape tasks
	last           int // curriculum window
	threshold      float64
	summary        string
}

var specs = [...]taskSpec{
	Copy:              {"Copy-v0", 5, 2, 0, 10, -1.0, "copy the input tape to the output"},
	DuplicatedInput:   {"DuplicatedInput-v0", 5, 2, 0, 10, -1.0, "write every symbol of a tape where each appears twice, once"},
	RepeatCopy:        {"RepeatCopy-v0", 5, 2, 0, 50, -0.1, "write the input, then it reversed, then it again"},
	Reverse:           {"Reverse-v0", 2, 1, 0, 50, -0.1, "write the input tape reversed"},
	ReversedAddition:  {"ReversedAddition-v0", 3, 2, 2, 10, -1.0, "add two numbers written least-significant digit first on a grid"},
	ReversedAddition3: {"ReversedAddition3-v0", 3, 2, 3, 10, -1.0, "add three numbers written least-significant digit first on a grid"},
}

// Tasks lists every task.
func Tasks() []Task {
	return []Task{Copy, DuplicatedInput, RepeatCopy, Reverse, ReversedAddition, ReversedAddition3}
}

// TaskByID finds a task by its registry id (e.g. "Copy-v0").
func TaskByID(id string) (Task, error) {
	for _, t := range Tasks() {
		if specs[t].id == id {
			return t, nil
		}
	}
	ids := make([]string, 0, len(specs))
	for _, t := range Tasks() {
		ids = append(ids, specs[t].id)
	}
	return 0, fmt.Errorf("algorithmic: unknown task %q (known: %s)", id, strings.Join(ids, ", "))
}

func (t Task) valid() bool { return t >= Copy && t <= ReversedAddition3 }

// ID is the registry id, e.g. "Copy-v0".
func (t Task) ID() string {
	if !t.valid() {
		return fmt.Sprintf("Task(%d)", int(t))
	}
	return specs[t].id
}

func (t Task) String() string { return t.ID() }

// Summary is a one-line description.
func (t Task) Summary() string { return specs[t].summary }

// DefaultBase is the base the gym registry used.
func (t Task) DefaultBase() int { return specs[t].defaultBase }

// StartMinLength is the curriculum's first min_length.
func (t Task) StartMinLength() int { return specs[t].startMinLength }

// Grid reports whether the task reads a grid (ReversedAddition) rather than a tape.
func (t Task) Grid() bool { return specs[t].rows > 0 }

// Rows is the number of rows of the input: 1 on the tape.
func (t Task) Rows() int { return max(1, specs[t].rows) }

// Moves is M, the number of head movements: 2 on the tape, 4 on the grid.
func (t Task) Moves() int {
	if t.Grid() {
		return 4
	}
	return 2
}

// CurriculumWindow is the number of episodes the curriculum looks back over (10, or 50 for Reverse
// and RepeatCopy).
func (t Task) CurriculumWindow() int { return specs[t].last }

// PromotionThreshold is the smallest shortfall that counts towards a level-up.
func (t Task) PromotionThreshold() float64 { return specs[t].threshold }

// generate appends a random input of the given length to dst (column-major for the grid).
func (t Task) generate(rng *rand.Rand, length int, base int64, dst []int64) []int64 {
	switch t {
	case DuplicatedInput:
		for range max(length, 2) / 2 {
			c := rng.Int64N(base)
			dst = append(dst, c, c)
		}
	default:
		for range length * t.Rows() {
			dst = append(dst, rng.Int64N(base))
		}
	}
	return dst
}

// target appends the target of input (cols columns) to dst.
func (t Task) target(input []int64, cols int, base int64, dst []int64) []int64 {
	switch t {
	case Copy:
		dst = append(dst, input...)
	case DuplicatedInput:
		for i := 0; i < len(input); i += 2 {
			dst = append(dst, input[i])
		}
	case RepeatCopy:
		dst = append(dst, input...)
		for i := len(input) - 1; i >= 0; i-- {
			dst = append(dst, input[i])
		}
		dst = append(dst, input...)
	case Reverse:
		for i := len(input) - 1; i >= 0; i-- {
			dst = append(dst, input[i])
		}
	case ReversedAddition, ReversedAddition3:
		rows := t.Rows()
		carry := int64(0)
		for x := range cols {
			s := carry
			for y := range rows {
				s += input[x*rows+y]
			}
			dst = append(dst, s%base)
			carry = s / base
		}
		if carry > 0 {
			dst = append(dst, carry)
		}
	}
	return dst
}

// timeLimit is the task's own limit: len(input)+len(target)+4 on the tape, 2*columns+4 on the grid.
func (t Task) timeLimit(cols, targetLen int) int {
	if t.Grid() {
		return 2*cols + 4
	}
	return cols + targetLen + 4
}

// parseInput validates an explicit input option and appends it to dst in storage order
// (column-major on the grid). It returns the number of columns.
func (t Task) parseInput(v any, base int64, dst []int64) ([]int64, int, error) {
	if t.Grid() {
		cols, err := asColumns(v)
		if err != nil {
			return dst, 0, err
		}
		if len(cols) == 0 {
			return dst, 0, fmt.Errorf("input has no columns")
		}
		for x, col := range cols {
			if len(col) != t.Rows() {
				return dst, 0, fmt.Errorf("input column %d has %d rows, want %d", x, len(col), t.Rows())
			}
			for y, s := range col {
				if s < 0 || s >= base {
					return dst, 0, fmt.Errorf("input column %d row %d: symbol %d out of range [0, %d)", x, y, s, base)
				}
			}
			dst = append(dst, col...)
		}
		return dst, len(cols), nil
	}
	syms, err := asInts(v)
	if err != nil {
		return dst, 0, err
	}
	if len(syms) == 0 {
		return dst, 0, fmt.Errorf("input is empty")
	}
	if t == DuplicatedInput && len(syms)%2 != 0 {
		return dst, 0, fmt.Errorf("input has odd length %d; DuplicatedInput needs an even length", len(syms))
	}
	for i, s := range syms {
		if s < 0 || s >= base {
			return dst, 0, fmt.Errorf("input symbol %d = %d out of range [0, %d)", i, s, base)
		}
	}
	return append(dst, syms...), len(syms), nil
}

// asInts accepts []int64, []int or []any of integers (as decoders produce).
func asInts(v any) ([]int64, error) {
	switch x := v.(type) {
	case []int64:
		return x, nil
	case []int:
		out := make([]int64, len(x))
		for i, s := range x {
			out[i] = int64(s)
		}
		return out, nil
	case []any:
		return convertEach(x, "input element", envs.Int64Of)
	default:
		return nil, fmt.Errorf("input is a %T, want a list of symbols ([]int64)", v)
	}
}

func asColumns(v any) ([][]int64, error) {
	switch x := v.(type) {
	case [][]int64:
		return x, nil
	case [][]int:
		out := make([][]int64, len(x))
		for i, c := range x {
			out[i], _ = asInts(c)
		}
		return out, nil
	case []any:
		return convertEach(x, "input column", asInts)
	default:
		return nil, fmt.Errorf("input is a %T, want a list of columns ([][]int64)", v)
	}
}

// convertEach converts every element of xs with f; an error names the element ("what i").
func convertEach[T any](xs []any, what string, f func(any) (T, error)) ([]T, error) {
	out := make([]T, len(xs))
	for i, x := range xs {
		v, err := f(x)
		if err != nil {
			return nil, fmt.Errorf("%s %d: %w", what, i, err)
		}
		out[i] = v
	}
	return out, nil
}
