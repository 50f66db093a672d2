package lstm

// Test hooks for the external benchmarks (compiled into tests only).

// SetDirectTrainingInput forces Forward onto the direct input path (x·Wx
// gemm) when on, and back to the automatic choice when off.
func SetDirectTrainingInput(n *Net, on bool) {
	n.trainInput = autoInput
	if on {
		n.trainInput = directInput
	}
}

// ProjectsTrainingInput reports whether Forward over rows rows will use the
// projected input tables.
func ProjectsTrainingInput(n *Net, rows int) bool { return n.projectedTraining(rows) }
