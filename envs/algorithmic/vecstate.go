package algorithmic

import (
	"fmt"

	"github.com/sparsepcl/sparsepcl/envs"
)

// CurriculumEnv is a vectorised env whose curriculum can be saved and restored (VecEnv is one);
// the functions below act on any envs.VecEnv, and do nothing for one without a curriculum.
type CurriculumEnv interface {
	CurriculumState() VecCurriculumState
	RestoreCurriculum(VecCurriculumState) error
	MinLength(i int) int
}

// CurriculumOf reports the curriculum length of copy 0 when the env has one.
func CurriculumOf(env envs.VecEnv) int {
	if c, ok := env.(CurriculumEnv); ok {
		return c.MinLength(0)
	}
	return 0
}

// SnapshotCurriculum snapshots env's curriculum, or returns nil when it has none.
func SnapshotCurriculum(env envs.VecEnv) *VecCurriculumState {
	c, ok := env.(CurriculumEnv)
	if !ok {
		return nil
	}
	s := c.CurriculumState()
	return &s
}

// RestoreVecCurriculum restores env's curriculum from s; it reports whether s was there to restore.
func RestoreVecCurriculum(env envs.VecEnv, s *VecCurriculumState, which string) (bool, error) {
	c, ok := env.(CurriculumEnv)
	if !ok || s == nil {
		return false, nil
	}
	if err := c.RestoreCurriculum(*s); err != nil {
		return false, fmt.Errorf("%s env curriculum: %w", which, err)
	}
	return true, nil
}

// SyncCurriculum sets the greedy-evaluation env's curriculum to a copy of the training env's
// current one, so that greedy_reward is measured where training is (the released code's gym envs
// shared one curriculum through class attributes). With a shared curriculum that is the one
// state; with per-copy curricula evaluation copy i gets training copy i mod batch's, so the
// evaluation episodes span the training batch's lengths. No pending shortfalls are copied: the
// evaluation's resets record nothing, and since the evaluation env is overwritten before each
// evaluation, nothing flows back into training, whatever the evaluation schedule.
func SyncCurriculum(eval, training envs.VecEnv) error {
	ec, ok := eval.(CurriculumEnv)
	tc, ok2 := training.(CurriculumEnv)
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
		s.Curricula[i] = CurriculumState{MinLength: c.MinLength, Shortfalls: append([]float64(nil), c.Shortfalls...)}
	}
	s.Pending = make([]*float64, len(s.Pending))
	if err := ec.RestoreCurriculum(s); err != nil {
		return fmt.Errorf("copy the training curriculum to the evaluation env: %w", err)
	}
	return nil
}
