package algorithmic

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

// seedStream is the second PCG word: fixed, so a seed alone names the stream.
const seedStream = 0x5eed_a1c0_9e37_79b9

// core is what every copy of one configured task shares.
type core struct {
	task      Task
	base      int64
	rows      int
	moves     int64
	moveBits  uint  // log2(moves)
	nActions  int64 // moves * 2 * base
	factored  bool
	dx, dy    [4]int
	blank     int64
	actionDim int // flat size of one action: 1 combined, 3 factored
}

func newCore(t Task, base int, factored bool) (*core, error) {
	if !t.valid() {
		return nil, fmt.Errorf("algorithmic: invalid task %d", int(t))
	}
	if base < 2 {
		return nil, fmt.Errorf("algorithmic: %v: base %d, want >= 2", t, base)
	}
	if int64(base) > (1<<62)/8 {
		return nil, fmt.Errorf("algorithmic: %v: base %d too large", t, base)
	}
	c := &core{task: t, base: int64(base), rows: t.Rows(), moves: int64(t.Moves()), factored: factored, blank: int64(base)}
	c.moveBits = 1
	if c.moves == 4 {
		c.moveBits = 2
	}
	c.nActions = c.moves * 2 * c.base
	c.dx = [4]int{-1, 1, 0, 0}
	c.dy = [4]int{0, 0, -1, 1}
	c.actionDim = 1
	if factored {
		c.actionDim = 3
	}
	return c, nil
}

// episode is the state of one copy.
type episode struct {
	input      []int64 // column-major on the grid: input[x*rows+y]
	cols       int
	target     []int64
	written    []int64
	x, y       int
	writePos   int
	time       int
	timeLimit  int
	total      float64
	started    bool // reset at least once: the next reset records a shortfall
	seeded     bool
	ended      bool
	lastAction int64 // combined index; -1 before the first step
	lastReward float64
	src        rand.PCG
	rng        *rand.Rand
	cur        *Curriculum
}

func newEpisode(cur *Curriculum) *episode {
	e := &episode{}
	e.init(cur)
	return e
}

// init prepares e in place (its rng points at its own source, so e must not move afterwards).
func (e *episode) init(cur *Curriculum) {
	*e = episode{cur: cur, lastAction: -1}
	e.rng = rand.New(&e.src)
}

// prepareInput validates an explicit input (nil: none) into scratch without touching the episode.
func (c *core) prepareInput(v any, scratch []int64) ([]int64, int, error) {
	in, cols, err := c.task.parseInput(v, c.base, scratch[:0])
	if err != nil {
		return scratch, 0, fmt.Errorf("%v: %w", c.task, err)
	}
	return in, cols, nil
}

// reset starts a new episode: seed, curriculum check, input (given or drawn), target.
// explicit is a validated input (column-major) with cols columns, or nil.
func (c *core) reset(e *episode, seed *int64, explicit []int64, cols int) int64 {
	switch {
	case seed != nil:
		e.src.Seed(uint64(*seed), seedStream)
		e.seeded = true
	case !e.seeded:
		e.src.Seed(rand.Uint64(), seedStream)
		e.seeded = true
	}
	if e.started {
		e.cur.record(e.total - float64(len(e.target)))
	}
	e.started = true
	if explicit != nil {
		e.input = append(e.input[:0], explicit...)
		e.cols = cols
	} else {
		length := e.cur.minLength + e.rng.IntN(3)
		e.input = c.task.generate(e.rng, length, c.base, e.input[:0])
		e.cols = len(e.input) / c.rows
	}
	e.target = c.task.target(e.input, e.cols, c.base, e.target[:0])
	if cap(e.written) < len(e.target) {
		e.written = make([]int64, 0, len(e.target))
	}
	e.written = e.written[:0]
	e.x, e.y, e.writePos, e.time, e.total = 0, 0, 0, 0, 0
	e.timeLimit = c.task.timeLimit(e.cols, len(e.target))
	e.ended = false
	e.lastAction, e.lastReward = -1, 0
	return c.obs(e)
}

// obs is the symbol under the read head, or blank off the input.
func (c *core) obs(e *episode) int64 {
	if e.x < 0 || e.y < 0 || e.x >= e.cols || e.y >= c.rows {
		return c.blank
	}
	return e.input[e.x*c.rows+e.y]
}

// step applies a combined action, already checked to be in range, to a running episode.
func (c *core) step(e *episode, a int64) (obs int64, reward float64, done bool) {
	move := a & (c.moves - 1)
	write := (a >> c.moveBits) & 1
	char := a >> (c.moveBits + 1)
	e.time++
	if write == 1 {
		if char == e.target[e.writePos] {
			reward = 1
		} else {
			reward = -0.5
			done = true
		}
		e.written = append(e.written, char)
		e.writePos++
		if e.writePos >= len(e.target) {
			done = true
		}
	}
	e.x += c.dx[move]
	e.y += c.dy[move]
	if e.time > e.timeLimit {
		reward = -1
		done = true
	}
	e.total += reward
	e.ended = done
	e.lastAction, e.lastReward = a, reward
	return c.obs(e), reward, done
}

// combine turns (move, write, char) into the combined index, checking ranges.
func (c *core) combine(move, write, char int64) (int64, error) {
	if move < 0 || move >= c.moves {
		return 0, fmt.Errorf("move %d out of range [0, %d)", move, c.moves)
	}
	if write != 0 && write != 1 {
		return 0, fmt.Errorf("write %d is not 0 or 1", write)
	}
	if char < 0 || char >= c.base {
		return 0, fmt.Errorf("char %d out of range [0, %d)", char, c.base)
	}
	return move + c.moves*write + 2*c.moves*char, nil
}

// ActionComponents of the action: (M, 2, base).
func (c *core) components() []int64 { return []int64{c.moves, 2, c.base} }

var moveNames = [4]string{"left", "right", "up", "down"}

// symbol renders one symbol (or the blank) in a cell of fixed width.
func (c *core) symbol(s int64) string {
	if c.base <= 26 {
		if s == c.blank {
			return " "
		}
		return string(rune('A' + s))
	}
	w := len(fmt.Sprint(c.base - 1))
	if s == c.blank {
		return strings.Repeat(" ", w)
	}
	return fmt.Sprintf("%*d", w, s)
}

// render draws the input with the read head in brackets, the output written so far, the target, and
// the last action and reward.
func (c *core) render(e *episode, minLength int) string {
	var b strings.Builder
	if !e.started {
		return fmt.Sprintf("%v (base %d): not reset yet\n", c.task, c.base)
	}
	fmt.Fprintf(&b, "%v (base %d)  step %d (limit %d)  min_length %d  input width %d\n", c.task, c.base, e.time, e.timeLimit, minLength, e.cols)
	x0, x1 := min(-2, e.x), max(e.cols+1, e.x)
	y0, y1 := min(0, e.y), max(c.rows-1, e.y)
	for y := y0; y <= y1; y++ {
		label := "Input   : "
		if y != y0 {
			label = "          "
		}
		b.WriteString(label)
		for x := x0; x <= x1; x++ {
			s := c.blank
			if x >= 0 && y >= 0 && x < e.cols && y < c.rows {
				s = e.input[x*c.rows+y]
			}
			if x == e.x && y == e.y {
				b.WriteString("[" + c.symbol(s) + "]")
			} else {
				b.WriteString(" " + c.symbol(s) + " ")
			}
		}
		b.WriteString("\n")
	}
	b.WriteString("Output  : ")
	for i, s := range e.written {
		mark := " "
		if s != e.target[i] {
			mark = "!"
		}
		b.WriteString(" " + c.symbol(s) + mark)
	}
	b.WriteString("\nTarget  : ")
	for _, s := range e.target {
		if s >= c.base { // gym's unwritable final carry (3 rows in base 2)
			b.WriteString(fmt.Sprintf("<%d>", s))
			continue
		}
		b.WriteString(" " + c.symbol(s) + " ")
	}
	b.WriteString("\n")
	if e.lastAction >= 0 {
		a := e.lastAction
		move, write, char := a&(c.moves-1), (a>>c.moveBits)&1, a>>(c.moveBits+1)
		act := "move " + moveNames[move]
		if write == 1 {
			act += ", write " + strings.TrimSpace(c.symbol(char))
		}
		fmt.Fprintf(&b, "Action  : %s (index %d)  reward %+.1f  total %+.1f", act, a, e.lastReward, e.total)
		if e.ended {
			b.WriteString("  [episode ended]")
		}
		b.WriteString("\n")
	}
	return b.String()
}
