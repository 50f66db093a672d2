package wrappers

import (
	"context"
	"fmt"
	"math"

	"github.com/sparsepcl/sparsepcl/envs"
)

// ActionGrid discretises a bounded float Box into k points per dimension: index = j0 + k*(j1 +
// k*(j2 + ...)) (first dimension least significant), and point j of dimension i is
// low_i + j*(high_i-low_i)/(k-1); the last point is high_i exactly.
type ActionGrid struct {
	box  envs.Box
	k    int
	size int64
	step []float64
}

// NewActionGrid rejects non-float Boxes, infinite bounds, k < 2 and grids of more than MaxInt64
// points.
func NewActionGrid(s envs.Space, k int) (*ActionGrid, error) {
	box, ok := s.(envs.Box)
	if !ok {
		return nil, fmt.Errorf("action grid: space %v is not a Box", s)
	}
	if err := box.Validate(); err != nil {
		return nil, fmt.Errorf("action grid: %w", err)
	}
	if !box.Dtype.IsFloat() {
		return nil, fmt.Errorf("action grid: %v has integer dtype %v; only float Boxes are discretised", box, box.Dtype)
	}
	if k < 2 {
		return nil, fmt.Errorf("action grid: %d points per dimension, want >= 2", k)
	}
	d := box.FlatSize()
	if d == 0 {
		return nil, fmt.Errorf("action grid: %v has no dimensions", box)
	}
	size := int64(1)
	for range d {
		if size > math.MaxInt64/int64(k) {
			return nil, fmt.Errorf("action grid: %d^%d actions overflow int64", k, d)
		}
		size *= int64(k)
	}
	g := &ActionGrid{box: box, k: k, size: size, step: make([]float64, d)}
	for i := range d {
		lo, hi := box.Low[i], box.High[i]
		if math.IsInf(lo, 0) || math.IsInf(hi, 0) {
			return nil, fmt.Errorf("action grid: dimension %d has infinite bounds [%v, %v]", i, lo, hi)
		}
		g.step[i] = (hi - lo) / float64(k-1)
	}
	return g, nil
}

// Space is the Discrete(k^d) of grid indices.
func (g *ActionGrid) Space() envs.Discrete { return envs.Discrete{N: g.size} }

// Dims is the number of dimensions d.
func (g *ActionGrid) Dims() int { return len(g.step) }

// K is the number of grid points per dimension.
func (g *ActionGrid) K() int { return g.k }

// Point writes the grid point of index into dst (len Dims()) without allocating.
func (g *ActionGrid) Point(index int64, dst []float64) error {
	if len(dst) != len(g.step) {
		return fmt.Errorf("action grid: destination has %d elements, want %d", len(dst), len(g.step))
	}
	if index < 0 || index >= g.size {
		return fmt.Errorf("action grid: index %d out of range [0, %d)", index, g.size)
	}
	k := int64(g.k)
	for i := range dst {
		j := index % k
		index /= k
		if j == k-1 {
			dst[i] = g.box.High[i]
		} else {
			dst[i] = g.box.Low[i] + float64(j)*g.step[i]
		}
	}
	return nil
}

// Index returns the index of the grid point nearest to point, which must lie in the Box.
func (g *ActionGrid) Index(point []float64) (int64, error) {
	if err := g.box.Check(point); err != nil {
		return 0, fmt.Errorf("action grid: %w", err)
	}
	index := int64(0)
	for i := len(point) - 1; i >= 0; i-- {
		j := int64(0)
		if g.step[i] > 0 {
			j = int64(math.Round((point[i] - g.box.Low[i]) / g.step[i]))
			j = min(max(j, 0), int64(g.k-1))
		}
		index = index*int64(g.k) + j
	}
	return index, nil
}

// DiscretizedVecEnv is a VecEnv whose Box actions are taken as grid indices: Step converts an
// integer Array of shape [N] into the Box's float Array [N, shape...] (its dtype, e.g. float32)
// that the wrapped VecEnv expects, without allocating.
type DiscretizedVecEnv struct {
	envs.VecEnv
	Grid *ActionGrid
	buf  envs.Array
}

// DiscretizeVecActions wraps venv with k points per action dimension.
func DiscretizeVecActions(venv envs.VecEnv, k int) (*DiscretizedVecEnv, error) {
	g, err := NewActionGrid(venv.ActionSpace(), k)
	if err != nil {
		return nil, err
	}
	return &DiscretizedVecEnv{VecEnv: venv, Grid: g, buf: envs.NewBatch(venv.ActionSpace(), venv.NumEnvs())}, nil
}

func (e *DiscretizedVecEnv) ActionSpace() envs.Space { return e.Grid.Space() }

// Step converts the indices into grid points and steps the wrapped VecEnv.
func (e *DiscretizedVecEnv) Step(ctx context.Context, actions envs.Array) (envs.StepResult, error) {
	if err := checkIndexArray(actions, e.NumEnvs()); err != nil {
		return envs.StepResult{}, fmt.Errorf("action grid: %w", err)
	}
	d := e.Grid.Dims()
	for i, a := range actions.Ints {
		if err := e.Grid.Point(a, e.buf.Floats[i*d:(i+1)*d]); err != nil {
			return envs.StepResult{}, fmt.Errorf("copy %d: %w", i, err)
		}
	}
	return e.VecEnv.Step(ctx, e.buf)
}
