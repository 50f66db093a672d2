package algorithmic

import "fmt"

// Move directions of the combined action's first component (tape tasks use left and right only).
const (
	MoveLeft  int64 = 0
	MoveRight int64 = 1
	MoveUp    int64 = 2
	MoveDown  int64 = 3
)

// Expert is an optimal scripted policy for one episode of a task. It sees only what an agent sees,
// the observation at each step, and keeps the rest (its phase on the tape, the digits read in the
// current column and the carry on the grid) as its own state, so it is the behaviour a recurrent
// policy has to represent. It earns len(target) on every episode it can solve within the time limit
// (all of them, except ReversedAddition3's long inputs: see the package's time-limit note).
// It is the source of expert paths (the released PCL code's num_expert_paths) and of the
// behaviour-cloning diagnosis.
type Expert struct {
	task      Task
	blank     int64
	phase     int
	t         int
	sum, seen int64
	carry     int64
	col       int
}

// NewExpert returns the expert for task at vocabulary size base, ready for an episode.
func NewExpert(task Task, base int) (*Expert, error) {
	if !task.valid() {
		return nil, fmt.Errorf("algorithmic: expert: unknown task %d", task)
	}
	if base < 2 {
		return nil, fmt.Errorf("algorithmic: expert: base %d, want >= 2", base)
	}
	return &Expert{task: task, blank: int64(base)}, nil
}

// Reset forgets the episode: call it before an episode's first observation.
func (p *Expert) Reset() { *p = Expert{task: p.task, blank: p.blank} }

// Act returns the (move, write, char) components for the current observation and advances the
// expert's state; Combine (or the mixed radix move + M*write + 2*M*char) makes the action.
func (p *Expert) Act(obs int64) (move, write, char int64) {
	defer func() { p.t++ }()
	switch p.task {
	case Copy:
		return MoveRight, 1, obs
	case DuplicatedInput:
		if p.t%2 == 0 {
			return MoveRight, 1, obs
		}
		return MoveRight, 0, 0
	case Reverse:
		if p.phase == 0 {
			if obs != p.blank {
				return MoveRight, 0, 0
			}
			p.phase = 1
			return MoveLeft, 0, 0
		}
		return MoveLeft, 1, obs
	case RepeatCopy:
		switch p.phase {
		case 0:
			if obs != p.blank {
				return MoveRight, 1, obs
			}
			p.phase = 1
			return MoveLeft, 0, 0
		case 1:
			if obs != p.blank {
				return MoveLeft, 1, obs
			}
			p.phase = 2
			return MoveRight, 0, 0
		default:
			return MoveRight, 1, obs
		}
	default: // serpentine over the grid: down the even columns, up the odd ones
		rows := int64(p.task.Rows())
		if obs == p.blank { // past the last column: the final carry
			return MoveRight, 1, p.carry
		}
		p.sum += obs
		p.seen++
		if p.seen < rows {
			if p.col%2 == 0 {
				return MoveDown, 0, 0
			}
			return MoveUp, 0, 0
		}
		s := p.sum + p.carry
		p.carry, p.sum, p.seen = s/p.blank, 0, 0
		p.col++
		return MoveRight, 1, s % p.blank
	}
}
