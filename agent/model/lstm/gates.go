package lstm

import (
	"github.com/sparsepcl/sparsepcl/agent/internal/f32"
	"github.com/sparsepcl/sparsepcl/agent/nn"
)

// The layer's gate functions in float32: it evaluates ~14M sigmoids per training step at the
// paper's shapes, and float64 math.Exp would cost as much as the matrix products. The C cell
// kernels compute the same functions on f32_exp.

// sigmoid32 is 1/(1+e^-x), accurate to a few ulp.
func sigmoid32(x float32) float32 { return 1 / (1 + f32.Exp(-x)) }

// tanh32 is nn's tanh (nn.Tanh32), the one the feed-forward networks use too.
func tanh32(x float32) float32 { return nn.Tanh32(x) }
