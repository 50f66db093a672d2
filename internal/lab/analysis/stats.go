package analysis

import (
	"math"
	"slices"

	"gonum.org/v1/gonum/stat"

	"github.com/sparsepcl/sparsepcl/internal/lab/plot"
)

// MeanStd is the mean of x and its population standard deviation (the sum of squared deviations
// divided by len(x), not len(x)-1: the seeds of a cell are the whole population the table
// describes, and every table of this program has used this definition). Both are NaN for no
// values; one value has std 0.
func MeanStd(x []float64) (mean, std float64) {
	if len(x) == 0 {
		return math.NaN(), math.NaN()
	}
	return stat.PopMeanStdDev(x, nil)
}

// Median is the middle value of x, or the mean of the two middle values for an even count (NaN
// for no values). x is not changed.
func Median(x []float64) float64 {
	if len(x) == 0 {
		return math.NaN()
	}
	y := slices.Clone(x)
	slices.Sort(y)
	n := len(y)
	if n%2 == 1 {
		return y[n/2]
	}
	return (y[n/2-1] + y[n/2]) / 2
}

// Point is one metrics row of one seed as a band sees it: its iteration, where it goes on the x
// axis, and its value.
type Point struct {
	It   int
	X, V float64
}

// SeedBand summarises seeds (each a run's points) over buckets of width iterations: each seed's mean
// of its finite values in a bucket, then the mean, min and max over the seeds that have the
// bucket, placed at the largest x of the bucket. Width 1 is one Point per iteration.
func SeedBand(seeds [][]Point, width int) plot.Band {
	type acc struct{ sum, lo, hi, n, x float64 }
	byBucket := map[int]*acc{}
	for _, pts := range seeds {
		type own struct{ sum, n, x float64 }
		mine := map[int]*own{}
		for _, p := range pts {
			if math.IsNaN(p.V) || math.IsInf(p.V, 0) {
				continue
			}
			k := p.It / width
			o := mine[k]
			if o == nil {
				o = &own{x: p.X}
				mine[k] = o
			}
			o.sum, o.n, o.x = o.sum+p.V, o.n+1, math.Max(o.x, p.X)
		}
		for k, o := range mine {
			v := o.sum / o.n
			a := byBucket[k]
			if a == nil {
				a = &acc{lo: v, hi: v, x: o.x}
				byBucket[k] = a
			}
			a.sum, a.n, a.lo, a.hi, a.x = a.sum+v, a.n+1, math.Min(a.lo, v), math.Max(a.hi, v), math.Max(a.x, o.x)
		}
	}
	keys := make([]int, 0, len(byBucket))
	for k := range byBucket {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b plot.Band
	for _, k := range keys {
		a := byBucket[k]
		b.X, b.Mean = append(b.X, a.x), append(b.Mean, a.sum/a.n)
		b.Lo, b.Hi = append(b.Lo, a.lo), append(b.Hi, a.hi)
	}
	return b
}
