// Package weight decides the regularisation weight α (τ for soft PCL) over a run: fixed, the
// released PCL code's decaying schedule, or an automatic weight that steers the policy's
// max-prob toward a target, as Soft Actor-Critic steers its entropy. It also watches a run for
// the failure a too-small weight causes: a policy that collapses onto one action before it has
// learned and stays there.
//
// # How a moving α enters path consistency
//
// The d-step consistency is C = −V(s_t) + γ^d V(s_{t+d}) + Σ_i γ^i (r_{t+i} + α·term_{t+i}), where
// term is −log π for soft PCL and, for sparse PCL, the Tsallis term built from the multiplier
// heads λ(s) and Λ(s). V is trained toward the α-regularised value V*_α, which moves with α: by
// about Δα · term/(1−γ) per state. The λ head is a scale exp(head) that multiplies α inside the
// term, so it does not have to follow α; the V head does. A weight that moves slowly, by a small
// fraction per iteration, keeps the critic's lag to its moving target well inside the lag it
// already has (the long-episode preset's V needs about 1,000 iterations to reach the return
// scale), which is why the automatic update's step is small and acts on log α.
//
// Nothing here touches the networks: a Controller returns the weight for the next iteration, and
// the trainer hands it to the learner (pcl.Learner.SetAlpha).
package weight
