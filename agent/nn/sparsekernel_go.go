//go:build !cgo || !amd64

package nn

// kSparseBackwardT is the kernel of sparsekernel_cgo.go in Go, with the same results: for each
// row r of dy, for each of its entries (j, v) in order, gt[j][k] += x[r][k] * v for the input
// units k in [k0, k1), and dx[r][k] set to (or, with accumulate, added) the sum over the row's
// entries, in order, of v * wt[j][k]. wt and gt are Out x In; dxd may be nil.
func kSparseBackwardT(dy *SparseRows, x []float32, in, k0, k1 int, wt, gt, dxd []float32, accumulate bool) {
	n := k1 - k0
	var s [256]float32
	for r := range dy.Rows {
		xr := x[r*in+k0 : r*in+k1]
		clear(s[:n])
		for e := dy.Offsets[r]; e < dy.Offsets[r+1]; e++ {
			v, j := dy.Values[e], int(dy.Index[e])
			g := gt[j*in+k0 : j*in+k1]
			for k, xv := range xr {
				g[k] += xv * v
			}
			if dxd != nil {
				for k, w := range wt[j*in+k0 : j*in+k1] {
					s[k] += v * w
				}
			}
		}
		if dxd == nil {
			continue
		}
		d := dxd[r*in+k0 : r*in+k1]
		for k := range d {
			if accumulate {
				d[k] += s[k]
			} else {
				d[k] = s[k]
			}
		}
	}
}

// transpose writes the transpose of src (rows x cols) into dst (cols x rows), in tiles that stay
// in cache.
func transpose(dst, src []float32, rows, cols int) {
	const tile = 32
	for r0 := 0; r0 < rows; r0 += tile {
		r1 := min(r0+tile, rows)
		for c0 := 0; c0 < cols; c0 += tile {
			c1 := min(c0+tile, cols)
			for r := r0; r < r1; r++ {
				row := src[r*cols : r*cols+c1]
				for c := c0; c < c1; c++ {
					dst[c*rows+r] = row[c]
				}
			}
		}
	}
}
