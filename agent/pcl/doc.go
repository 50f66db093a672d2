// Package pcl is the algorithm of path consistency learning (Nachum, Chow, Ghavamzadeh 2018:
// sparse PCL, and its baseline soft PCL), apart from any network: the d-step path-consistency
// loss on per-step arrays (PathLoss), the per-step consistency terms of soft, sparse and
// general-Tsallis PCL computed from network heads (Heads, with one Algorithm per regulariser),
// the objective that joins them (Objective), the lagged target network and trust region, the
// policy's summaries over visited states (Stats, LogitGaps), and the one learner (Learner) that
// trains a network of either family through the small Network interface. The families are models of their own packages: the LSTM over whole episodes of the
// algorithmic tasks (agent/model/lstm) and the MLPs over sub-episodes of continuous control
// (agent/model/mlp).
//
// # The paper's symbols in the code
//
//	π(a|s)   the policy: Heads.Probs of a row of head 0, the entmax of index Algorithm.Q() of the
//	         logits z (softmax for Soft, sparsemax for Sparse); in the unified form z = Q/α.
//	V(s)     the value: the V head (Heads.VHead) in the separate form, α times the value operator
//	         of z (log-sum-exp, spmax, the entmax conjugate) in the unified form; PathInputs.Values.
//	α        the regularisation weight (τ of soft PCL): Heads.Alpha, set by Heads.SetAlpha or
//	         Learner.SetAlpha, held nowhere else; config.Config.Alpha is its initial value.
//	q        the Tsallis entropic index: Algorithm.Q() (1 Soft, 2 Sparse, Tsallis.EntropicIndex).
//	λ(a|s)   sparse PCL's multiplier relu(G(z) - z_a) * exp(head): the head Heads.LambdaHead (its
//	         log-scale); Tsallis PCL's multiplier reads the same head.
//	Λ(s)     sparse PCL's -(α/2) * sigmoid(head): the head Heads.BigHead.
//	μ(a|s)   relu(z_a - G(z)), inside Sparse's step term (policy.SparseStep).
//	G(z)     the sparsemax threshold: the tau the policy functions return (the log-sum-exp for soft).
//	C        the consistency of one path; PathLoss sums C²/2 over the rows and averages over the
//	         batch. The non-reward part of each step's contribution is the step term
//	         (PathInputs.Terms): -τ log π(a|s) for Soft, α/2 - αμ(a|s) + λ(a|s) - Λ(s) for Sparse.
//	d        the path length: Objective.Rollout (config.Config.Rollout).
//	γ        the discount: Objective.Gamma (config.Config.Gamma).
//	r        the rewards: Steps.Rewards and PathInputs.Rewards, time-major (row t*B+b).
//
// The released code's policy-gradient scale 1/α (config pg_scale "inverse-alpha") is
// Objective.InverseAlpha, and the weight on V's gradient Objective.CriticWeight.
package pcl
