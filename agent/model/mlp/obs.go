package mlp

import (
	"fmt"
	"math"

	"github.com/sparsepcl/sparsepcl/agent/collect"
	"github.com/sparsepcl/sparsepcl/agent/nn"
	"github.com/sparsepcl/sparsepcl/envs"
)

// Encoder writes one observation row of a batch as a flat float vector, the feed-forward
// networks' input.
type Encoder = collect.Encoder[float32]

// NewEncoder returns the encoder of an observation space: a Box is flattened, a Discrete is
// one-hot encoded, and a MultiDiscrete, a MultiBinary, or a Tuple or Dict of those, Boxes and
// Discretes is flattened as gymnasium.spaces.flatten does (see flatEncoder). Any other space
// (images, nested composites) is refused with an error that names it.
func NewEncoder(s envs.Space) (Encoder, error) {
	switch s := s.(type) {
	case envs.Box:
		n := s.FlatSize()
		if n < 1 {
			return nil, fmt.Errorf("mlp: observation space %v has no elements", s)
		}
		if len(s.Shape) > 1 {
			return nil, fmt.Errorf("mlp: observation space %v has %d dimensions: the feed-forward networks read flat vectors, not images", s, len(s.Shape))
		}
		return boxEncoder{n: n}, nil
	case envs.Discrete:
		if s.N < 1 || s.N > 1<<16 {
			return nil, fmt.Errorf("mlp: observation space %v: a one-hot encoding needs 1 <= n <= 65536", s)
		}
		return onehotEncoder{n: int(s.N), start: s.Start}, nil
	case envs.MultiDiscrete, envs.MultiBinary, envs.Tuple, envs.Dict:
		return newFlatEncoder(s)
	default:
		return nil, fmt.Errorf("mlp: observation space %v is not supported: the mlp reads a Box vector, a Discrete, or a Tuple or Dict of those", s)
	}
}

type boxEncoder struct{ n int }

func (e boxEncoder) Dim() int { return e.n }

func (e boxEncoder) Encode(dst []float32, obs envs.Array, r int) error {
	if !obs.DType.IsFloat() {
		row := obs.Ints[r*e.n : (r+1)*e.n]
		for i, v := range row {
			dst[i] = float32(v)
		}
		return nil
	}
	row := obs.Floats[r*e.n : (r+1)*e.n]
	for i, v := range row {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("mlp: observation of copy %d has %v at element %d", r, v, i)
		}
		dst[i] = float32(v)
	}
	return nil
}

type onehotEncoder struct {
	n     int
	start int64
}

func (e onehotEncoder) Dim() int { return e.n }

func (e onehotEncoder) Encode(dst []float32, obs envs.Array, r int) error {
	clear(dst)
	v := obs.Ints[r] - e.start
	if v < 0 || v >= int64(e.n) {
		return fmt.Errorf("mlp: observation %d of copy %d is outside Discrete(%d, start=%d)", obs.Ints[r], r, e.n, e.start)
	}
	dst[v] = 1
	return nil
}

// Normalizer keeps running means and variances of the observation vector (Chan et al.'s parallel
// update) and maps observations to (x - mean) / std, clipped to [-Clip, Clip]. Its statistics live
// in a Param so that checkpoints carry them; they are updated once per iteration from the fresh
// observations, so a batch is always normalised with one set of statistics.
type Normalizer struct {
	// Stats is 3 x Dim: the means, the sums of squared deviations, and the count (in column 0).
	Stats *nn.Param
	Clip  float32
	mean  []float32
	inv   []float32
}

// NewNormalizer returns a normaliser of dim inputs with no data (the identity until updated).
func NewNormalizer(dim int) *Normalizer {
	n := &Normalizer{Stats: nn.NewParam("obs_norm.stats", 3, dim), Clip: 10, mean: make([]float32, dim), inv: make([]float32, dim)}
	n.refresh()
	return n
}

// Count is the number of observations seen.
func (n *Normalizer) Count() float64 { return float64(n.Stats.Value.Data[2*n.dim()]) }

func (n *Normalizer) dim() int { return n.Stats.Value.Cols }

// Update folds a batch of rows (len multiple of Dim) into the statistics.
func (n *Normalizer) Update(rows []float32) {
	d := n.dim()
	m := len(rows) / d
	if m == 0 {
		return
	}
	st := n.Stats.Value.Data
	na := float64(st[2*d])
	nb := float64(m)
	tot := na + nb
	for j := range d {
		var mb float64
		for r := range m {
			mb += float64(rows[r*d+j])
		}
		mb /= nb
		var m2b float64
		for r := range m {
			x := float64(rows[r*d+j]) - mb
			m2b += x * x
		}
		ma, m2a := float64(st[j]), float64(st[d+j])
		delta := mb - ma
		st[j] = float32(ma + delta*nb/tot)
		st[d+j] = float32(m2a + m2b + delta*delta*na*nb/tot)
	}
	st[2*d] = float32(tot)
	n.refresh()
}

// refresh recomputes the cached mean and inverse std from Stats (after Update or a checkpoint load).
func (n *Normalizer) refresh() {
	d := n.dim()
	st := n.Stats.Value.Data
	cnt := float64(st[2*d])
	for j := range d {
		if cnt < 2 {
			n.mean[j], n.inv[j] = 0, 1
			continue
		}
		n.mean[j] = st[j]
		v := float64(st[d+j]) / cnt
		n.inv[j] = float32(1 / math.Sqrt(v+1e-8))
	}
}

// Refresh must be called after Stats was overwritten (a checkpoint load).
func (n *Normalizer) Refresh() { n.refresh() }

// Apply normalises rows (len multiple of Dim) into dst.
func (n *Normalizer) Apply(dst, rows []float32) {
	d := n.dim()
	for i, x := range rows {
		j := i % d
		v := (x - n.mean[j]) * n.inv[j]
		dst[i] = min(max(v, -n.Clip), n.Clip)
	}
}
