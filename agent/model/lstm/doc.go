// Package lstm is the model of the algorithmic tasks: one recurrent policy and value network over
// whole episodes, as the paper's reference code builds it (the observation and the previous
// action's components embedded and summed, an LSTM with TF BasicLSTMCell semantics over masked
// variable-length sequences, and linear heads in pcl.Heads' layout).
//
// Model is the network as the PCL learner sees it (a pcl.Network over episodes), Learner the one
// PCL learner over it, Actor the model acting in env copies one step at a time with each copy's
// recurrent state (a collect.Actor), TokenEncoder the observation's token (a collect.Encoder),
// and Spec the task's observation vocabulary and action components the network is sized from.
// Net is the network itself (summed embeddings -> LSTM layer -> linear heads) on nn's parameters:
// sequences are time-major (row t*B+b holds step t of sequence b), and its Forward and Backward
// follow nn's conventions.
//
// Speed: the LSTM gate arithmetic runs on vectorised C kernels when built
// with cgo on amd64 (Go fallbacks otherwise), split over GOMAXPROCS
// goroutines of a per-layer worker pool for large batches. Net never
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
package lstm
