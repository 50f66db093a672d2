package algorithmic

import (
	"fmt"
	"math"
)

// CurriculumState is a snapshot of a Curriculum: its min_length and the shortfalls recorded since
// the last level-up, oldest first. It is plain data (it round-trips through encoding/json exactly)
// so that a training checkpoint can carry it and a resumed run continues the same curriculum.
type CurriculumState struct {
	MinLength  int       `json:"min_length"`
	Shortfalls []float64 `json:"shortfalls"`
}

// State returns a snapshot of c.
func (c *Curriculum) State() CurriculumState {
	s := CurriculumState{MinLength: c.minLength, Shortfalls: make([]float64, 0, c.count)}
	n := len(c.ring)
	for k := range c.count {
		s.Shortfalls = append(s.Shortfalls, c.ring[(c.next-c.count+k+n)%n])
	}
	return s
}

// check reports why s cannot be a state of c's task.
func (c *Curriculum) check(s CurriculumState) error {
	if s.MinLength < c.start || s.MinLength > MaxMinLength {
		return fmt.Errorf("min_length %d outside [%d, %d]", s.MinLength, c.start, MaxMinLength)
	}
	if len(s.Shortfalls) > len(c.ring) {
		return fmt.Errorf("%d shortfalls, the window holds %d", len(s.Shortfalls), len(c.ring))
	}
	below := 0
	for i, v := range s.Shortfalls {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("shortfall %d is %v", i, v)
		}
		if v < c.threshold {
			below++
		}
	}
	if len(s.Shortfalls) == len(c.ring) && below == 0 && s.MinLength < MaxMinLength {
		return fmt.Errorf("a full window of passing shortfalls at min_length %d would have levelled up", s.MinLength)
	}
	return nil
}

// Restore sets c to s. An s that c's task cannot reach (min_length out of range, more shortfalls
// than the window, a non-finite shortfall, a full passing window below the cap) is an error and
// leaves c unchanged.
func (c *Curriculum) Restore(s CurriculumState) error {
	if err := c.check(s); err != nil {
		return fmt.Errorf("algorithmic: restore curriculum: %w", err)
	}
	c.set(s)
	return nil
}

// set restores a checked state.
func (c *Curriculum) set(s CurriculumState) {
	c.minLength = s.MinLength
	clear(c.ring)
	copy(c.ring, s.Shortfalls)
	c.count, c.next, c.below = len(s.Shortfalls), len(s.Shortfalls)%len(c.ring), 0
	for _, v := range s.Shortfalls {
		if v < c.threshold {
			c.below++
		}
	}
}

// VecCurriculumState is a snapshot of everything a VecEnv's future curriculum depends on: the
// curricula (one when shared, one per copy otherwise) and, per copy, the shortfall of its current
// episode, which the copy's next reset records (nil for a copy never reset). The pending
// shortfalls matter: a reset records them one copy at a time before drawing that copy's input, so
// a snapshot without them would level up later than the original env.
type VecCurriculumState struct {
	PerCopy   bool              `json:"per_copy"`
	Curricula []CurriculumState `json:"curricula"`
	Pending   []*float64        `json:"pending"`
}

// CurriculumState returns a snapshot of v's curricula. Take it between batches (after the copies'
// episodes ended and before the next Reset) to continue exactly after RestoreCurriculum.
func (v *VecEnv) CurriculumState() VecCurriculumState {
	s := VecCurriculumState{PerCopy: v.perCopy(), Pending: make([]*float64, len(v.eps))}
	for _, c := range v.curricula {
		s.Curricula = append(s.Curricula, c.State())
	}
	for i := range v.eps {
		if e := &v.eps[i]; e.started {
			p := e.total - float64(len(e.target))
			s.Pending[i] = &p
		}
	}
	return s
}

// perCopy reports whether each copy has its own curriculum (a single copy counts as both).
func (v *VecEnv) perCopy() bool { return len(v.curricula) == len(v.eps) && len(v.eps) > 1 }

// RestoreCurriculum sets v's curricula and pending shortfalls from s, all or nothing. s must come
// from a VecEnv of the same task, number of copies and curriculum mode. Every copy with a pending
// shortfall is left in an ended episode (stepping it reports a termination, as after any end) whose
// next reset records that shortfall; a copy without one is left as never reset.
func (v *VecEnv) RestoreCurriculum(s VecCurriculumState) error {
	n := len(v.eps)
	if len(v.eps) > 1 && s.PerCopy != v.perCopy() {
		return fmt.Errorf("%v: restore curriculum: snapshot per_copy = %v, this env's is %v", v.c.task, s.PerCopy, v.perCopy())
	}
	if len(s.Curricula) != len(v.curricula) {
		return fmt.Errorf("%v: restore curriculum: %d curricula for an env with %d", v.c.task, len(s.Curricula), len(v.curricula))
	}
	if len(s.Pending) != n {
		return fmt.Errorf("%v: restore curriculum: %d pending shortfalls for %d copies", v.c.task, len(s.Pending), n)
	}
	for i, cs := range s.Curricula {
		if err := v.curricula[i].check(cs); err != nil {
			return fmt.Errorf("%v: restore curriculum %d: %w", v.c.task, i, err)
		}
	}
	for i, p := range s.Pending {
		if p != nil && (math.IsNaN(*p) || math.IsInf(*p, 0)) {
			return fmt.Errorf("%v: restore curriculum: pending shortfall of copy %d is %v", v.c.task, i, *p)
		}
	}
	for i, cs := range s.Curricula {
		v.curricula[i].set(cs)
	}
	for i, p := range s.Pending {
		e := &v.eps[i]
		e.input, e.target, e.written = e.input[:0], e.target[:0], e.written[:0]
		e.cols, e.x, e.y, e.writePos, e.time, e.timeLimit = 0, 0, 0, 0, 0, 0
		e.lastAction, e.lastReward = -1, 0
		e.started, e.ended, e.total = p != nil, p != nil, 0
		if p != nil {
			e.total = *p // with an empty target, the next reset records total - 0 = *p
		}
	}
	return nil
}
