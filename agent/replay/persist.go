package replay

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"os"

	"github.com/sparsepcl/sparsepcl/agent/atomicfile"
	"github.com/sparsepcl/sparsepcl/agent/episode"
)

// SaveFile writes the buffer to path atomically: a temporary file in the same directory is
// written, fsynced and renamed over path, so a crash leaves either the old or the new file.
// A replay of vectors is streamed to the file, not built in memory first.
func (b *Buffer[O]) SaveFile(path string) error {
	write := func(w io.Writer) error {
		data, err := b.MarshalBinary()
		if err == nil {
			_, err = w.Write(data)
		}
		return err
	}
	if bv, ok := any(b).(*Buffer[float32]); ok {
		write = func(w io.Writer) error { return writeVectors(bv, w) }
	}
	if err := atomicfile.Write(path, 0o644, write); err != nil {
		return fmt.Errorf("replay: save: %w", err)
	}
	return nil
}

// LoadFile replaces the buffer's contents with the file at path (see Decode), checking every
// trajectory's observations against dim.
func (b *Buffer[O]) LoadFile(path string, dim int) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("replay: load: %w", err)
	}
	if err := b.Decode(data, dim); err != nil {
		return fmt.Errorf("replay: load %s: %w", path, err)
	}
	return nil
}

// MarshalBinary encodes the buffer's whole state in its observation type's format: whole episodes
// of tokens in the binary format below, sub-episodes of vectors in vectors.go's.
func (b *Buffer[O]) MarshalBinary() ([]byte, error) {
	switch bb := any(b).(type) {
	case *Buffer[int32]:
		return marshalTokens(bb)
	case *Buffer[float32]:
		var out bytes.Buffer
		if err := writeVectors(bb, &out); err != nil {
			return nil, err
		}
		return out.Bytes(), nil
	}
	return nil, fmt.Errorf("replay: no file format for %T", b)
}

// Decode replaces the buffer's contents with data from MarshalBinary of a buffer of the same
// capacity, checking every trajectory's observations against dim. On any error the buffer is
// unchanged.
func (b *Buffer[O]) Decode(data []byte, dim int) error {
	switch bb := any(b).(type) {
	case *Buffer[int32]:
		if dim != episode.TokenDim {
			return fmt.Errorf("replay: token episodes have dim %d, not %d", episode.TokenDim, dim)
		}
		return decodeTokens(bb, data)
	case *Buffer[float32]:
		return decodeVectors(bb, data, dim)
	}
	return fmt.Errorf("replay: no file format for %T", b)
}

// File format (version 1) of a buffer of token episodes, all integers little-endian:
//
//	magic     8 bytes "SPCLRPLY"
//	version   uint32  1
//	capacity  uint32
//	fifo      uint8   1 for FIFO eviction
//	next      uint32  next FIFO slot
//	count     uint32  stored episodes, in storage order, each:
//	  priority   float64
//	  iteration  int64
//	  terminated uint8   1 if terminated; 0 if truncated (the buffer holds whole episodes)
//	  steps      uint32 L
//	  obs        (L+1) int32
//	  actions    L int32
//	  rewards    L float64
//	crc       uint32  CRC-32C (Castagnoli) of every byte before it
const (
	fileMagic          = "SPCLRPLY"
	fileVersion uint32 = 1
)

// ErrFormat marks data that is not a replay buffer of this format version.
var ErrFormat = errors.New("replay: bad format")

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// marshalTokens encodes the buffer's whole state: capacity, eviction, FIFO cursor, and every
// episode with its priority in storage order (which sampling depends on).
func marshalTokens(b *Buffer[int32]) ([]byte, error) {
	le := binary.LittleEndian
	out := append([]byte(fileMagic), le.AppendUint32(nil, fileVersion)...)
	out = le.AppendUint32(out, uint32(b.keep.Limit))
	fifo := byte(0)
	if b.keep.Evict == EvictFIFO {
		fifo = 1
	}
	out = append(out, fifo)
	out = le.AppendUint32(out, uint32(b.next))
	out = le.AppendUint32(out, uint32(len(b.items)))
	for i, e := range b.items {
		if err := e.Validate(episode.TokenDim); err != nil {
			return nil, fmt.Errorf("replay: encode episode %d: %w", i, err)
		}
		out = le.AppendUint64(out, math.Float64bits(b.prio[i]))
		out = le.AppendUint64(out, uint64(int64(e.Iteration)))
		term := byte(0)
		if e.Terminated {
			term = 1
		}
		out = append(out, term)
		out = le.AppendUint32(out, uint32(e.Len()))
		for _, o := range e.Obs {
			out = le.AppendUint32(out, uint32(o))
		}
		for _, a := range e.Actions {
			out = le.AppendUint32(out, uint32(a))
		}
		for _, r := range e.Rewards {
			out = le.AppendUint64(out, math.Float64bits(r))
		}
	}
	return le.AppendUint32(out, crc32.Checksum(out, castagnoli)), nil
}

// decoder reads with bounds checks; the first error sticks.
type decoder struct {
	b   []byte
	off int
	err error
}

func (d *decoder) take(n int, what string) []byte {
	if d.err != nil {
		return nil
	}
	if n < 0 || len(d.b)-d.off < n {
		d.err = fmt.Errorf("%w: truncated at byte %d reading %s", ErrFormat, d.off, what)
		return nil
	}
	s := d.b[d.off : d.off+n]
	d.off += n
	return s
}

func (d *decoder) u8(what string) byte {
	if s := d.take(1, what); s != nil {
		return s[0]
	}
	return 0
}

func (d *decoder) u32(what string) uint32 {
	if s := d.take(4, what); s != nil {
		return binary.LittleEndian.Uint32(s)
	}
	return 0
}

func (d *decoder) u64(what string) uint64 {
	if s := d.take(8, what); s != nil {
		return binary.LittleEndian.Uint64(s)
	}
	return 0
}

// decodeTokens replaces the buffer's contents with data from marshalTokens of a buffer of the
// same capacity and eviction; on any error the buffer is unchanged.
func decodeTokens(b *Buffer[int32], data []byte) error {
	if len(data) < len(fileMagic)+8 || string(data[:len(fileMagic)]) != fileMagic {
		return fmt.Errorf("%w: not a replay buffer (missing %q magic)", ErrFormat, fileMagic)
	}
	if v := binary.LittleEndian.Uint32(data[len(fileMagic):]); v != fileVersion {
		return fmt.Errorf("%w: version %d, this program reads version %d", ErrFormat, v, fileVersion)
	}
	body, sum := data[:len(data)-4], binary.LittleEndian.Uint32(data[len(data)-4:])
	if got := crc32.Checksum(body, castagnoli); got != sum {
		return fmt.Errorf("%w: checksum mismatch (stored %08x, computed %08x): data corrupt", ErrFormat, sum, got)
	}
	d := &decoder{b: body, off: len(fileMagic) + 4}
	capacity, fifo, next, count := int(d.u32("capacity")), d.u8("eviction") == 1, int(d.u32("FIFO cursor")), int(d.u32("count"))
	if d.err != nil {
		return d.err
	}
	if capacity != b.keep.Limit || fifo != (b.keep.Evict == EvictFIFO) || b.keep.Evict == EvictOldest {
		return fmt.Errorf("replay: saved buffer has capacity %d (fifo %v), this one %d (fifo %v)", capacity, fifo, b.keep.Limit, b.keep.Evict == EvictFIFO)
	}
	if count > capacity || next >= capacity {
		return fmt.Errorf("%w: %d episodes and FIFO cursor %d for capacity %d", ErrFormat, count, next, capacity)
	}
	eps := make([]*episode.Episode, 0, count)
	prio := make([]float64, 0, count)
	for i := 0; i < count && d.err == nil; i++ {
		p := math.Float64frombits(d.u64("priority"))
		e := &episode.Episode{Iteration: int(int64(d.u64("iteration"))), Terminated: d.u8("terminated") == 1}
		e.Truncated = !e.Terminated
		L := int(d.u32("steps"))
		if d.err == nil && uint64(L)*16+4 > uint64(len(d.b)-d.off) {
			return fmt.Errorf("%w: episode %d claims %d steps, more than the data holds", ErrFormat, i, L)
		}
		e.Obs, e.Actions, e.Rewards = make([]int32, L+1), make([]int32, L), make([]float64, L)
		for t := range e.Obs {
			e.Obs[t] = int32(d.u32("observation"))
		}
		for t := range e.Actions {
			e.Actions[t] = int32(d.u32("action"))
		}
		for t := range e.Rewards {
			e.Rewards[t] = math.Float64frombits(d.u64("reward"))
		}
		if d.err != nil {
			break
		}
		if err := e.Validate(episode.TokenDim); err != nil {
			return fmt.Errorf("%w: episode %d: %v", ErrFormat, i, err)
		}
		if math.IsNaN(p) || math.IsInf(p, 0) {
			return fmt.Errorf("%w: episode %d has priority %v", ErrFormat, i, p)
		}
		eps, prio = append(eps, e), append(prio, p)
	}
	if d.err != nil {
		return d.err
	}
	if d.off != len(body) {
		return fmt.Errorf("%w: %d trailing bytes after the last episode", ErrFormat, len(body)-d.off)
	}
	steps := 0
	for _, e := range eps {
		steps += e.Len()
	}
	b.items, b.prio, b.next, b.steps = eps, prio, next, steps
	return nil
}
