// Package nn holds the parameters and the feed-forward layers the models are built from, each
// with a hand-written forward and backward pass on float32 tensor.Matrix values: Param and its
// deterministic initialisations, Linear, and a tanh MLP. The recurrent network of the
// algorithmic tasks is a model of its own (agent/model/lstm), built on these.
//
// Conventions:
//   - Forward caches what Backward needs; Backward ACCUMULATES into
//     Param.Grad (call ZeroGrads between steps). Output matrices returned by
//     Forward are owned by the layer and valid until its next Forward.
//   - Every shape is checked; a mismatch is an error naming the shapes.
//   - Initialisation is deterministic from explicit seeds (math/rand/v2);
//     nothing here touches a global RNG.
//
// A Linear takes its output gradient dense (Backward), as sparse rows (BackwardSparse: sparse
// PCL's logits, non-zero on the support and the taken action) or as one factor per row of a
// matrix the caller holds (BackwardRowScaled: soft PCL's logits over their exponentials). tanh
// and the bias kernels run vectorised in C when built with cgo on amd64.
//
// The optimiser lives in nn/optim, checkpoints in nn/checkpoint, and the finite-difference
// gradient checks of the tests in nn/nntest.
package nn
