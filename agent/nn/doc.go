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
// goroutines of a per-LSTM worker pool for large batches. SeqNet.Step
// projects the embedding tables through the LSTM input kernel on every call
// (cheap: Σ vocabularies rows) and gathers rows instead of a B-row gemm, so
// it never sees stale parameters. See BenchmarkStep and BenchmarkTrainStep.
//
// The optimiser lives in nn/optim and checkpoints in nn/checkpoint.
package nn
