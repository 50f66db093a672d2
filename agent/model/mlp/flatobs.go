package mlp

import (
	"fmt"
	"math"

	"github.com/sparsepcl/sparsepcl/envs"
)

// maxFlatDim bounds the encoded length of a composite observation.
const maxFlatDim = 1 << 20

// leafKind says how a leaf of a composite observation is encoded.
type leafKind int

const (
	leafCopy   leafKind = iota // Box, MultiBinary: the values as they are
	leafOneHot                 // Discrete, each MultiDiscrete element: a one-hot vector
)

// leaf is one part of a composite observation: n values copied, or one value one-hot encoded over
// n categories starting at start; in is its offset in the observation row, out in the encoding.
type leaf struct {
	kind    leafKind
	in, out int
	n       int
	start   int64
	name    string // where it is in the space, for errors
}

// flatEncoder encodes a Tuple or Dict of Box, Discrete, MultiDiscrete and MultiBinary spaces (or a
// MultiDiscrete or MultiBinary alone) as gymnasium.spaces.flatten does: the parts in order (a
// Dict's by sorted key, as Gymnasium orders a Dict made from a dict), Discrete and MultiDiscrete
// elements one-hot, Box and MultiBinary values as they are.
type flatEncoder struct {
	width  int // the observation row's flat size
	dim    int
	leaves []leaf
}

// newFlatEncoder builds the encoder of s, refusing nested composites and multi-dimensional Boxes.
func newFlatEncoder(s envs.Space) (Encoder, error) {
	e := &flatEncoder{}
	var parts []envs.Space
	var names []string
	switch s := s.(type) {
	case envs.Tuple:
		for i, p := range s.Spaces {
			parts, names = append(parts, p), append(names, fmt.Sprintf("component %d", i))
		}
	case envs.Dict:
		for _, k := range s.Keys() {
			parts, names = append(parts, s.Spaces[k]), append(names, fmt.Sprintf("entry %q", k))
		}
	default:
		parts, names = []envs.Space{s}, []string{"it"}
	}
	if len(parts) == 0 {
		return nil, fmt.Errorf("mlp: observation space %v has no parts", s)
	}
	for i, p := range parts {
		if err := e.add(p, names[i]); err != nil {
			return nil, fmt.Errorf("mlp: observation space %v: %s: %w", s, names[i], err)
		}
		if e.dim > maxFlatDim {
			return nil, fmt.Errorf("mlp: observation space %v flattens to more than %d inputs", s, maxFlatDim)
		}
	}
	return e, nil
}

// add appends the leaves of the part p.
func (e *flatEncoder) add(p envs.Space, name string) error {
	switch p := p.(type) {
	case envs.Box:
		if len(p.Shape) > 1 {
			return fmt.Errorf("%v has %d dimensions: the feed-forward networks read flat vectors, not images", p, len(p.Shape))
		}
		e.push(leaf{kind: leafCopy, n: p.FlatSize(), name: name})
	case envs.MultiBinary:
		e.push(leaf{kind: leafCopy, n: p.N, name: name})
	case envs.Discrete:
		if p.N < 1 || p.N > 1<<16 {
			return fmt.Errorf("%v: a one-hot encoding needs 1 <= n <= 65536", p)
		}
		e.push(leaf{kind: leafOneHot, n: int(p.N), start: p.Start, name: name})
	case envs.MultiDiscrete:
		for i, n := range p.Nvec {
			if n < 1 || n > 1<<16 {
				return fmt.Errorf("%v element %d: a one-hot encoding needs 1 <= n <= 65536", p, i)
			}
			start := int64(0)
			if p.Start != nil {
				start = p.Start[i]
			}
			e.push(leaf{kind: leafOneHot, n: int(n), start: start, name: fmt.Sprintf("%s element %d", name, i)})
		}
	case envs.Tuple, envs.Dict:
		return fmt.Errorf("%v is nested: observations are flattened one level deep (a Tuple or Dict of Box, Discrete, MultiDiscrete and MultiBinary)", p)
	default:
		return fmt.Errorf("%v is not supported", p)
	}
	return nil
}

// push appends l at the ends of the row and of the encoding.
func (e *flatEncoder) push(l leaf) {
	l.in, l.out = e.width, e.dim
	if l.kind == leafOneHot {
		e.width++
	} else {
		e.width += l.n
	}
	e.dim += l.n
	e.leaves = append(e.leaves, l)
}

func (e *flatEncoder) Dim() int { return e.dim }

func (e *flatEncoder) Encode(dst []float32, obs envs.Array, r int) error {
	at := func(i int) float64 {
		if obs.DType.IsFloat() {
			return obs.Floats[r*e.width+i]
		}
		return float64(obs.Ints[r*e.width+i])
	}
	for _, l := range e.leaves {
		out := dst[l.out : l.out+l.n]
		if l.kind == leafCopy {
			for i := range out {
				v := at(l.in + i)
				if math.IsNaN(v) || math.IsInf(v, 0) {
					return fmt.Errorf("mlp: observation of copy %d has %v at %s, element %d", r, v, l.name, i)
				}
				out[i] = float32(v)
			}
			continue
		}
		clear(out)
		v := at(l.in)
		k := v - float64(l.start)
		if k != math.Trunc(k) || k < 0 || k >= float64(l.n) {
			return fmt.Errorf("mlp: observation of copy %d: %s is %v, outside %d values from %d", r, l.name, v, l.n, l.start)
		}
		out[int(k)] = 1
	}
	return nil
}
