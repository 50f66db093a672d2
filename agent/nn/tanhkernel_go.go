//go:build !cgo || !amd64

package nn

// TanhInto writes tanh(src) into dst (same length): the tanh of this package's networks.
func TanhInto(dst, src []float32) {
	dst = dst[:len(src)]
	for i, v := range src {
		dst[i] = tanh32(v)
	}
}

// TanhBackward multiplies the gradient d by tanh's derivative at its outputs a: d[k] *= 1 - a[k]².
func TanhBackward(d, a []float32) { tanhBackwardGo(d, a) }

// kAddRows adds v to each of the rows rows of y (rows x len(v)).
func kAddRows(y, v []float32, rows int) {
	c := len(v)
	for r := range rows {
		row := y[r*c : (r+1)*c]
		for j, b := range v {
			row[j] += b
		}
	}
}

// kAddColSums adds the column sums of m (rows x len(dst)) to dst, each in row order.
func kAddColSums(dst, m []float32, rows int) {
	c := len(dst)
	for r := range rows {
		row := m[r*c : (r+1)*c]
		for j, v := range row {
			dst[j] += v
		}
	}
}
