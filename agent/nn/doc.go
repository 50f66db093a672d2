// Package nn holds the neural-network layers of the learner, each with a
// hand-written forward and backward pass on float32 tensor.Matrix values:
// Linear, EmbeddingSum, LSTM (TF BasicLSTMCell semantics, masked
// variable-length sequences), a tanh MLP, and SeqNet, the composite
// EmbeddingSum -> LSTM -> linear heads network of the algorithmic tasks.
//
// Conventions:
//   - Sequences are time-major: row t*B+b holds step t of sequence b.
//   - Forward caches what Backward needs; Backward ACCUMULATES into
//     Param.Grad (call ZeroGrads between steps). Output matrices returned by
//     Forward are owned by the layer and valid until its next Forward.
//   - Every shape is checked; a mismatch is an error naming the shapes.
//   - Initialisation is deterministic from explicit seeds (math/rand/v2);
//     nothing here touches a global RNG.
//
// Speed: the LSTM gate arithmetic runs on vectorised C kernels when built
// with cgo on amd64 (Go fallbacks otherwise), split over GOMAXPROCS
// goroutines of a per-LSTM worker pool for large batches. SeqNet never
// multiplies embedding sums by the LSTM input kernel when vocabularies are
// small: since x = bias + Σ_f E_f[tok_f], it projects the tables once per
// call (P = [E_0; ...; bias]·Wx, Σ vocabularies + 1 rows) and gathers F+1
// rows of P per input row. Step does so for every call, so it never sees
// stale parameters; Forward too, with the gather fused into the cell
// kernel, and Backward scatters the pre-activation gradient back into dP
// (fused into the backward cell kernel, one partial per worker), then
// dWx = stackᵀ·dP and d(tables) = dP·Wxᵀ are tiny gemms. That removes the
// three T*B-row input gemms of a training step; huge vocabularies keep the
// direct path (see projectedTraining). On that projected path training
// also packs the batch by step, longest sequences first, so the recurrent
// products, the cells and the heads run on the Σ lengths active rows only,
// not on the T*B rows of the padded batch (Forward's outputs stay
// time-major). Value heads (one column) run as gemv. See BenchmarkStep,
// BenchmarkTrainStep and BenchmarkTrainStepInputPaths.
//
// A Linear takes its output gradient dense (Backward), as sparse rows (BackwardSparse: sparse
// PCL's logits, non-zero on the support and the taken action) or as one factor per row of a
// matrix the caller holds (BackwardRowScaled: soft PCL's logits over their exponentials).
//
// The optimiser lives in nn/optim and checkpoints in nn/checkpoint.
package nn
