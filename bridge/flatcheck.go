package bridge

import (
	"math"

	"github.com/sparsepcl/sparsepcl/envs"
)

// flatChecker checks whole batches of actions column by column, without building per-row values:
// the fast path of VecEnv.checkActions. It accepts exactly what ReadRow followed by Space.Check accepts;
// on a rejected row the caller re-runs the slow path for its precise error message.
type flatChecker struct {
	cols []flatCol
}

// flatCol bounds one element of a row. Integer leaves (Discrete, MultiDiscrete, MultiBinary) compare
// as int64 and, in a float batch, must be integral within ±2^53 (as ReadRow requires); Box elements
// compare as float64, must not be NaN, and must be integral when the Box dtype is an integer type.
type flatCol struct {
	isInt      bool
	lowI, hiI  int64 // inclusive
	lowF, hiF  float64
	integralBx bool
}

func newFlatChecker(s envs.Space) (*flatChecker, bool) {
	fc := &flatChecker{}
	if !fc.add(s) || len(fc.cols) != s.FlatSize() {
		return nil, false
	}
	return fc, true
}

func (fc *flatChecker) add(s envs.Space) bool {
	switch x := s.(type) {
	case envs.Discrete:
		fc.cols = append(fc.cols, flatCol{isInt: true, lowI: x.Start, hiI: x.Start + x.N - 1})
	case envs.MultiDiscrete:
		for i, n := range x.Nvec {
			st := int64(0)
			if x.Start != nil {
				st = x.Start[i]
			}
			fc.cols = append(fc.cols, flatCol{isInt: true, lowI: st, hiI: st + n - 1})
		}
	case envs.MultiBinary:
		for range x.N {
			fc.cols = append(fc.cols, flatCol{isInt: true, lowI: 0, hiI: 1})
		}
	case envs.Box:
		for i := range x.Low {
			fc.cols = append(fc.cols, flatCol{lowF: x.Low[i], hiF: x.High[i], integralBx: !x.Dtype.IsFloat()})
		}
	case envs.Tuple:
		for _, c := range x.Spaces {
			if !fc.add(c) {
				return false
			}
		}
	case envs.Dict:
		for _, k := range x.Keys() {
			if !fc.add(x.Spaces[k]) {
				return false
			}
		}
	default:
		return false
	}
	return true
}

// firstBad returns the first row of a (already shape-checked) batch that is not in the space, or -1.
func (fc *flatChecker) firstBad(a envs.Array, rows int) int {
	w := len(fc.cols)
	if a.DType.IsFloat() {
		for r := range rows {
			row := a.Floats[r*w : (r+1)*w]
			for j, c := range fc.cols {
				x := row[j]
				if c.isInt {
					if x != math.Trunc(x) || math.Abs(x) > 1<<53 || int64(x) < c.lowI || int64(x) > c.hiI {
						return r
					}
				} else if math.IsNaN(x) || x < c.lowF || x > c.hiF || (c.integralBx && x != math.Trunc(x)) {
					return r
				}
			}
		}
		return -1
	}
	for r := range rows {
		row := a.Ints[r*w : (r+1)*w]
		for j, c := range fc.cols {
			x := row[j]
			if c.isInt {
				if x < c.lowI || x > c.hiI {
					return r
				}
			} else if f := float64(x); f < c.lowF || f > c.hiF {
				return r
			}
		}
	}
	return -1
}
