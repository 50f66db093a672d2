package pcl

import "github.com/sparsepcl/sparsepcl/agent/nn"

// What the external tests (package pcl_test, which build the learner over a real network of
// agent/model) read of the package's inside.

// SmallConfig is testConfig.
var SmallConfig = testConfig

// DirectLoss is directLoss (path_test.go): the path loss by direct enumeration of the rows.
var DirectLoss = directLoss

// LaggedParams are the lagged network's parameters of l.
func LaggedParams[T any, N Network[T]](l *Learner[T, N]) []*nn.Param { return l.target.params }

// DropLagged makes l bootstrap from the network itself.
func DropLagged[T any, N Network[T]](l *Learner[T, N]) { l.target = nil }

// SetTrustLambda sets the weight of l's trust region.
func SetTrustLambda[T any, N Network[T]](l *Learner[T, N], lambda float64) {
	l.obj.trust.Lambda = lambda
}
