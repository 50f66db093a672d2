package pcl

// SetAlpha changes the regularisation weight (alpha, or tau for soft PCL) of a live learner: in
// the per-step terms, in the unified form's Q/alpha, and in the "inverse-alpha" policy scale. It
// is what a weight schedule (the released code's tau_start/tau_decay) calls between steps. The
// weight is held once, in the heads (Heads.SetAlpha).
func (l *Learner) SetAlpha(alpha float64) error {
	return l.Model.Heads.SetAlpha(alpha)
}

// Alpha is the current regularisation weight (Cfg.Alpha is the one the learner was built with).
func (l *Learner) Alpha() float64 { return l.Model.Heads.Alpha }
