package train

import (
	"fmt"

	"github.com/sparsepcl/sparsepcl/envs"
	"github.com/sparsepcl/sparsepcl/envs/algorithmic"
)

// curriculumEnv is an env whose curriculum can be saved and restored (envs/algorithmic).
type curriculumEnv interface {
	CurriculumState() algorithmic.VecCurriculumState
	RestoreCurriculum(algorithmic.VecCurriculumState) error
	MinLength(i int) int
}

// curriculumOf reports the curriculum length of copy 0 when the env has one.
func curriculumOf(env envs.VecEnv) int {
	if c, ok := env.(curriculumEnv); ok {
		return c.MinLength(0)
	}
	return 0
}

// curriculumState snapshots env's curriculum, or returns nil when it has none.
func curriculumState(env envs.VecEnv) *algorithmic.VecCurriculumState {
	c, ok := env.(curriculumEnv)
	if !ok {
		return nil
	}
	s := c.CurriculumState()
	return &s
}

// restoreCurriculum restores env's curriculum from s; it reports whether s was there to restore.
func restoreCurriculum(env envs.VecEnv, s *algorithmic.VecCurriculumState, which string) (bool, error) {
	c, ok := env.(curriculumEnv)
	if !ok || s == nil {
		return false, nil
	}
	if err := c.RestoreCurriculum(*s); err != nil {
		return false, fmt.Errorf("%s env curriculum: %w", which, err)
	}
	return true, nil
}

// syncEvalCurriculum sets the greedy-evaluation env's curriculum to a copy of the training env's
// current one, so that greedy_reward is measured where training is (the released code's gym envs
// shared one curriculum through class attributes). With a shared curriculum that is the one
// state; with per-copy curricula evaluation copy i gets training copy i mod batch's, so the
// evaluation episodes span the training batch's lengths. No pending shortfalls are copied: the
// evaluation's resets record nothing, and since the evaluation env is overwritten before each
// evaluation, nothing flows back into training, whatever the evaluation schedule.
func syncEvalCurriculum(eval, training envs.VecEnv) error {
	ec, ok := eval.(curriculumEnv)
	tc, ok2 := training.(curriculumEnv)
	if !ok || !ok2 {
		return nil
	}
	from := tc.CurriculumState()
	s := ec.CurriculumState()
	if len(from.Curricula) == 0 {
		return fmt.Errorf("the training env reports no curriculum")
	}
	for i := range s.Curricula {
		c := from.Curricula[i%len(from.Curricula)]
		s.Curricula[i] = algorithmic.CurriculumState{MinLength: c.MinLength, Shortfalls: append([]float64(nil), c.Shortfalls...)}
	}
	s.Pending = make([]*float64, len(s.Pending))
	if err := ec.RestoreCurriculum(s); err != nil {
		return fmt.Errorf("copy the training curriculum to the evaluation env: %w", err)
	}
	return nil
}
