//go:build !cgo || !amd64

package lstm

// haveCellKernel reports whether the vectorised C cell kernels are built in.
const haveCellKernel = false

func cellsKernel(g, cPrev, c, h, tc []float32, rows, H int, forget float32) {
	panic("lstm: cellsKernel without cgo")
}

func cellsBackwardKernel(a, cPrev, tc, dhExt, dcExt, dhNext, dcNext, dg []float32, rows, H int) {
	panic("lstm: cellsBackwardKernel without cgo")
}

func gatherKernel(out, proj, bias []float32, tokens, offs []int32, rows, F, W int) {
	panic("lstm: gatherKernel without cgo")
}

func cellsBackwardInputKernel(a, cPrev, tc, dhExt, dcExt, dhNext, dcNext, dg []float32, rows, H int,
	in *inputRows, tokens []int32, dProj []float32) {
	panic("lstm: cellsBackwardInputKernel without cgo")
}

func cellsInputKernel(g, cPrev, c, h, tc []float32, rows, H int, forget float32, in *inputRows, tokens []int32) {
	panic("lstm: cellsInputKernel without cgo")
}
