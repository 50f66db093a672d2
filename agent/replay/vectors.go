package replay

import (
	"bytes"
	"encoding/binary"
	"encoding/gob"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"math"

	"github.com/sparsepcl/sparsepcl/agent/episode"
)

// File format (version 2) of a buffer of vector sub-episodes, the long-episode replay's, all
// integers little-endian:
//
//	magic     8 bytes "SPCLRPLV"
//	version   uint32  2
//	capacity  uint64  env steps
//	dim       uint32  values per observation
//	count     uint32  stored sub-episodes, oldest first, each:
//	  iteration  int64   the collecting iteration (the Recency priority)
//	  flags      uint8   1 terminated, 2 truncated, 4 returns to go follow the rewards
//	  steps      uint32  L
//	  obs        (L+1)·dim float32
//	  actions    L int32
//	  rewards    L float64
//	  returns    L float64, when flag 4
//	crc       uint32  CRC-32C (Castagnoli) of every byte before it
//
// It is written as a stream (writeVectors): a checkpoint of a full replay of a million steps
// holds no second copy of it in memory. Version 1 was gob (vectorFile), which decodeVectors still
// reads.
const (
	vectorMagic          = "SPCLRPLV"
	vectorVersion uint32 = 2
)

const (
	flagTerminated = 1 << iota
	flagTruncated
	flagReturns
)

// writeVectors streams b in the version-2 format to w.
func writeVectors(b *Buffer[float32], w io.Writer) error {
	dim := 0
	for i, s := range b.items {
		d := len(s.Obs) / (s.Len() + 1)
		if err := s.Validate(d); err != nil || (i > 0 && d != dim) {
			return fmt.Errorf("replay: encode segment %d: observations of %d values per state after %d (%v)", i, d, dim, err)
		}
		dim = d
	}
	cw := &crcWriter{w: w, h: crc32.New(castagnoli)}
	le := binary.LittleEndian
	head := append([]byte(vectorMagic), le.AppendUint32(nil, vectorVersion)...)
	head = le.AppendUint64(head, uint64(b.keep.Limit))
	head = le.AppendUint32(head, uint32(dim))
	head = le.AppendUint32(head, uint32(len(b.items)))
	if _, err := cw.Write(head); err != nil {
		return err
	}
	var buf []byte
	for _, s := range b.items {
		buf = appendSegment(buf[:0], s)
		if _, err := cw.Write(buf); err != nil {
			return err
		}
	}
	_, err := w.Write(le.AppendUint32(nil, cw.h.Sum32()))
	return err
}

// appendSegment appends one sub-episode's record to buf.
func appendSegment(buf []byte, s *episode.Trajectory[float32]) []byte {
	le := binary.LittleEndian
	flags := byte(0)
	if s.Terminated {
		flags |= flagTerminated
	}
	if s.Truncated {
		flags |= flagTruncated
	}
	if s.ReturnToGo != nil {
		flags |= flagReturns
	}
	buf = le.AppendUint64(buf, uint64(int64(s.Iteration)))
	buf = append(buf, flags)
	buf = le.AppendUint32(buf, uint32(s.Len()))
	for _, o := range s.Obs {
		buf = le.AppendUint32(buf, math.Float32bits(o))
	}
	for _, a := range s.Actions {
		buf = le.AppendUint32(buf, uint32(a))
	}
	for _, r := range s.Rewards {
		buf = le.AppendUint64(buf, math.Float64bits(r))
	}
	for _, g := range s.ReturnToGo {
		buf = le.AppendUint64(buf, math.Float64bits(g))
	}
	return buf
}

// crcWriter passes writes on to w and sums them.
type crcWriter struct {
	w io.Writer
	h hash.Hash32
}

func (c *crcWriter) Write(p []byte) (int, error) {
	c.h.Write(p) // a hash.Hash never returns an error
	return c.w.Write(p)
}

// decodeVectors replaces b's contents with a file of either version, checking every trajectory
// against dim; on any error b is unchanged.
func decodeVectors(b *Buffer[float32], data []byte, dim int) error {
	var segs []*episode.Trajectory[float32]
	var err error
	if bytes.HasPrefix(data, []byte(vectorMagic)) {
		segs, err = readVectors(b, data, dim)
	} else {
		segs, err = readGobVectors(data)
	}
	if err != nil {
		return err
	}
	steps := 0
	prio := make([]float64, len(segs))
	for i, s := range segs {
		if s == nil {
			return fmt.Errorf("%w: segment %d is empty", ErrFormat, i)
		}
		if err := s.Validate(dim); err != nil {
			return fmt.Errorf("%w: segment %d: %w", ErrFormat, i, err)
		}
		steps += s.Len()
		prio[i] = float64(s.Iteration)
	}
	b.items, b.prio, b.steps, b.next = segs, prio, steps, 0
	return nil
}

// readVectors reads the version-2 format.
func readVectors(b *Buffer[float32], data []byte, dim int) ([]*episode.Trajectory[float32], error) {
	if len(data) < len(vectorMagic)+8 {
		return nil, fmt.Errorf("%w: truncated header", ErrFormat)
	}
	if v := binary.LittleEndian.Uint32(data[len(vectorMagic):]); v != vectorVersion {
		return nil, fmt.Errorf("%w: version %d, this program reads version %d", ErrFormat, v, vectorVersion)
	}
	body, sum := data[:len(data)-4], binary.LittleEndian.Uint32(data[len(data)-4:])
	if got := crc32.Checksum(body, castagnoli); got != sum {
		return nil, fmt.Errorf("%w: checksum mismatch (stored %08x, computed %08x): data corrupt", ErrFormat, sum, got)
	}
	d := &decoder{b: body, off: len(vectorMagic) + 4}
	capacity, fileDim, count := int(d.u64("capacity")), int(d.u32("dim")), int(d.u32("count"))
	if d.err != nil {
		return nil, d.err
	}
	if capacity != b.keep.Limit || b.keep.Evict != EvictOldest {
		return nil, fmt.Errorf("replay: saved buffer holds %d steps, this one %d", capacity, b.keep.Limit)
	}
	if count > 0 && fileDim != dim {
		return nil, fmt.Errorf("%w: observations of %d values, want %d", ErrFormat, fileDim, dim)
	}
	segs := make([]*episode.Trajectory[float32], 0, min(count, len(body)/16))
	for i := 0; i < count && d.err == nil; i++ {
		s := &episode.Trajectory[float32]{Iteration: int(int64(d.u64("iteration")))}
		flags := d.u8("flags")
		s.Terminated, s.Truncated = flags&flagTerminated != 0, flags&flagTruncated != 0
		L := int(d.u32("steps"))
		if d.err == nil && uint64(L)*(4*uint64(dim)+12) > uint64(len(d.b)-d.off) {
			return nil, fmt.Errorf("%w: segment %d claims %d steps, more than the data holds", ErrFormat, i, L)
		}
		s.Obs, s.Actions, s.Rewards = make([]float32, (L+1)*dim), make([]int32, L), make([]float64, L)
		for t := range s.Obs {
			s.Obs[t] = math.Float32frombits(d.u32("observation"))
		}
		for t := range s.Actions {
			s.Actions[t] = int32(d.u32("action"))
		}
		for t := range s.Rewards {
			s.Rewards[t] = math.Float64frombits(d.u64("reward"))
		}
		if flags&flagReturns != 0 {
			s.ReturnToGo = make([]float64, L)
			for t := range s.ReturnToGo {
				s.ReturnToGo[t] = math.Float64frombits(d.u64("return to go"))
			}
		}
		segs = append(segs, s)
	}
	if d.err != nil {
		return nil, d.err
	}
	if d.off != len(body) {
		return nil, fmt.Errorf("%w: %d trailing bytes after the last segment", ErrFormat, len(body)-d.off)
	}
	return segs, nil
}

// vectorFile is the version-1 format (gob): the step capacity and the trajectories, oldest first.
type vectorFile struct {
	Version  int
	Capacity int
	Segments []*episode.Trajectory[float32]
}

// readGobVectors reads the version-1 format, which runs saved before version 2 hold.
func readGobVectors(data []byte) ([]*episode.Trajectory[float32], error) {
	var f vectorFile
	if err := gob.NewDecoder(bytes.NewReader(data)).Decode(&f); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrFormat, err)
	}
	if f.Version != 1 {
		return nil, fmt.Errorf("%w: version %d, want 1", ErrFormat, f.Version)
	}
	return f.Segments, nil
}
