package pcl

import (
	"fmt"
	"math"
)

// SetAlpha changes the regularisation weight (alpha, or tau for soft PCL) of a live learner: in
// the per-step terms, in the unified form's Q/alpha, and in the "inverse-alpha" policy scale. It
// is what a weight schedule (the released code's tau_start/tau_decay) calls between steps.
func (l *Learner) SetAlpha(alpha float64) error {
	if !(alpha > 0) || math.IsInf(alpha, 0) {
		return fmt.Errorf("pcl: alpha %v, want > 0", alpha)
	}
	l.Cfg.Alpha = alpha
	l.obj.Cfg.Alpha = alpha
	l.Model.Heads.Alpha = alpha
	return nil
}

// Alpha is the current regularisation weight.
func (l *Learner) Alpha() float64 { return l.obj.Cfg.Alpha }
