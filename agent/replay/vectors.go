package replay

import (
	"bytes"
	"encoding/gob"
	"fmt"

	"github.com/sparsepcl/sparsepcl/agent/episode"
)

// vectorFile is the on-disk form (gob, version 1) of a buffer of vector sub-episodes, the
// long-episode replay's: its step capacity and its trajectories, oldest first. It holds no
// priorities: that replay's are the iterations that collected them (Recency).
type vectorFile struct {
	Version  int
	Capacity int
	Segments []*episode.Trajectory[float32]
}

// marshalVectors encodes b as a vectorFile.
func marshalVectors(b *Buffer[float32]) ([]byte, error) {
	var out bytes.Buffer
	if err := gob.NewEncoder(&out).Encode(vectorFile{Version: 1, Capacity: b.keep.Limit, Segments: b.items}); err != nil {
		return nil, fmt.Errorf("replay: encode: %w", err)
	}
	return out.Bytes(), nil
}

// decodeVectors replaces b's contents with a vectorFile's, checking every trajectory against dim;
// on any error b is unchanged.
func decodeVectors(b *Buffer[float32], data []byte, dim int) error {
	var f vectorFile
	if err := gob.NewDecoder(bytes.NewReader(data)).Decode(&f); err != nil {
		return fmt.Errorf("%w: %w", ErrFormat, err)
	}
	if f.Version != 1 {
		return fmt.Errorf("%w: version %d, want 1", ErrFormat, f.Version)
	}
	steps := 0
	prio := make([]float64, len(f.Segments))
	for i, s := range f.Segments {
		if s == nil {
			return fmt.Errorf("%w: segment %d is empty", ErrFormat, i)
		}
		if err := s.Validate(dim); err != nil {
			return fmt.Errorf("%w: segment %d: %w", ErrFormat, i, err)
		}
		steps += s.Len()
		prio[i] = float64(s.Iteration)
	}
	b.items, b.prio, b.steps, b.next = f.Segments, prio, steps, 0
	return nil
}
