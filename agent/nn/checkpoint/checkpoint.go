// Package checkpoint saves and restores named parameter sets.
//
// # Format (version 1), all integers little-endian
//
//	magic    8 bytes  "SPCLCKPT"
//	version  uint32   1
//	metaLen  uint32   length of the opaque metadata blob
//	meta     metaLen bytes (the caller's: config, iteration, RNG state...)
//	count    uint32   number of parameters
//	count x:
//	  nameLen uint16, name (UTF-8)
//	  rows    uint32, cols uint32
//	  data    rows*cols float32 (IEEE 754 bits), row-major
//	crc      uint32   CRC-32C (Castagnoli) of every byte before it
//
// Writes are atomic: a temporary file in the same directory is written,
// fsynced, renamed over the target and the directory fsynced, so a crash
// leaves either the old or the new checkpoint. Optimiser state is saved the
// same way, as extra named parameters (see optim.Adam.StateParams).
package checkpoint

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"math"
	"os"

	"github.com/sparsepcl/sparsepcl/agent/atomicfile"
	"github.com/sparsepcl/sparsepcl/agent/nn"
	"github.com/sparsepcl/sparsepcl/agent/tensor"
)

// Magic opens every checkpoint file.
const Magic = "SPCLCKPT"

// Version is the format version this package writes and reads.
const Version uint32 = 1

const maxNameLen = math.MaxUint16

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// ErrFormat marks a file that is not a valid checkpoint of this version. Its text carries no
// package prefix: Load names the file, and the caller says what it was loading it for.
var ErrFormat = errors.New("bad format")

// Tensor is one named matrix read from a file.
type Tensor struct {
	Name  string
	Value *tensor.Matrix
}

// File is a decoded checkpoint.
type File struct {
	Meta    []byte
	Tensors []Tensor
}

// Encode serialises params (their Values) and meta.
func Encode(params []*nn.Param, meta []byte) ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteString(Magic)
	le := binary.LittleEndian
	buf.Write(le.AppendUint32(nil, Version))
	if uint64(len(meta)) > math.MaxUint32 {
		return nil, fmt.Errorf("checkpoint: metadata of %d bytes too large", len(meta))
	}
	buf.Write(le.AppendUint32(nil, uint32(len(meta))))
	buf.Write(meta)
	buf.Write(le.AppendUint32(nil, uint32(len(params))))
	seen := map[string]bool{}
	for _, p := range params {
		if p == nil || p.Value == nil {
			return nil, fmt.Errorf("checkpoint: nil parameter")
		}
		if seen[p.Name] {
			return nil, fmt.Errorf("checkpoint: duplicate parameter name %q", p.Name)
		}
		seen[p.Name] = true
		if len(p.Name) == 0 || len(p.Name) > maxNameLen {
			return nil, fmt.Errorf("checkpoint: parameter name %q: length must be 1..%d", p.Name, maxNameLen)
		}
		m := p.Value
		if len(m.Data) != m.Rows*m.Cols {
			return nil, fmt.Errorf("checkpoint: parameter %s: %d values for shape %s", p.Name, len(m.Data), m.Shape())
		}
		buf.Write(le.AppendUint16(nil, uint16(len(p.Name))))
		buf.WriteString(p.Name)
		buf.Write(le.AppendUint32(nil, uint32(m.Rows)))
		buf.Write(le.AppendUint32(nil, uint32(m.Cols)))
		b := make([]byte, 4*len(m.Data))
		for i, v := range m.Data {
			le.PutUint32(b[4*i:], math.Float32bits(v))
		}
		buf.Write(b)
	}
	buf.Write(le.AppendUint32(nil, crc32.Checksum(buf.Bytes(), castagnoli)))
	return buf.Bytes(), nil
}

// reader decodes with bounds checks; the first error sticks.
type reader struct {
	b   []byte
	off int
	err error
}

func (r *reader) take(n int, what string) []byte {
	if r.err != nil {
		return nil
	}
	if n < 0 || len(r.b)-r.off < n {
		r.err = fmt.Errorf("%w: truncated at byte %d reading %s (%d bytes wanted, %d left)", ErrFormat, r.off, what, n, len(r.b)-r.off)
		return nil
	}
	s := r.b[r.off : r.off+n]
	r.off += n
	return s
}

func (r *reader) u32(what string) uint32 {
	if s := r.take(4, what); s != nil {
		return binary.LittleEndian.Uint32(s)
	}
	return 0
}

// Decode parses a checkpoint, verifying magic, version and checksum.
func Decode(data []byte) (*File, error) {
	if len(data) < len(Magic)+4+4 || string(data[:len(Magic)]) != Magic {
		return nil, fmt.Errorf("%w: not a checkpoint (missing %q magic)", ErrFormat, Magic)
	}
	if v := binary.LittleEndian.Uint32(data[len(Magic):]); v != Version {
		return nil, fmt.Errorf("%w: version %d, this program reads version %d", ErrFormat, v, Version)
	}
	body, sum := data[:len(data)-4], binary.LittleEndian.Uint32(data[len(data)-4:])
	if got := crc32.Checksum(body, castagnoli); got != sum {
		return nil, fmt.Errorf("%w: checksum mismatch (stored %08x, computed %08x): file corrupt", ErrFormat, sum, got)
	}
	r := &reader{b: body, off: len(Magic) + 4}
	f := &File{}
	metaLen := r.u32("metadata length")
	f.Meta = append([]byte(nil), r.take(int(metaLen), "metadata")...)
	count := r.u32("parameter count")
	for i := uint32(0); i < count && r.err == nil; i++ {
		nl := r.take(2, "name length")
		if nl == nil {
			break
		}
		name := string(r.take(int(binary.LittleEndian.Uint16(nl)), "name"))
		rows, cols := r.u32("rows of "+name), r.u32("cols of "+name)
		n := uint64(rows) * uint64(cols)
		if n > uint64(len(r.b)-r.off)/4 { // not n*4: rows = cols = 2^31 would wrap n*4 to 0
			return nil, fmt.Errorf("%w: parameter %q claims %dx%d values, more than the file holds", ErrFormat, name, rows, cols)
		}
		raw := r.take(int(n)*4, "data of "+name)
		if raw == nil {
			break
		}
		m := tensor.New(int(rows), int(cols))
		for k := range m.Data {
			m.Data[k] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*k:]))
		}
		f.Tensors = append(f.Tensors, Tensor{Name: name, Value: m})
	}
	if r.err != nil {
		return nil, r.err
	}
	if r.off != len(body) {
		return nil, fmt.Errorf("%w: %d trailing bytes after the last parameter", ErrFormat, len(body)-r.off)
	}
	return f, nil
}

// Save writes params and meta to path atomically.
func Save(path string, params []*nn.Param, meta []byte) error {
	data, err := Encode(params, meta)
	if err != nil {
		return err
	}
	if err := atomicfile.WriteFile(path, data, 0o644); err != nil {
		return fmt.Errorf("checkpoint: save: %w", err)
	}
	return nil
}

// Load reads and decodes the checkpoint at path. Its errors name path once, as
// "checkpoint <path>: <what is wrong>", so that callers add only their own context.
func Load(path string) (*File, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err // the path is named below, once
		}
		return nil, fmt.Errorf("checkpoint %s: %w", path, err)
	}
	f, err := Decode(data)
	if err != nil {
		return nil, fmt.Errorf("checkpoint %s: %w", path, err)
	}
	return f, nil
}

// Restore loads path into params (matched by name) and returns the
// metadata. Every param must be in the file with the same shape, and the
// file must hold no parameter outside params; otherwise nothing is changed
// and the error names the offenders.
func Restore(path string, params []*nn.Param) ([]byte, error) {
	f, err := Load(path)
	if err != nil {
		return nil, err
	}
	if err := f.Apply(params); err != nil {
		return nil, fmt.Errorf("checkpoint %s does not match the parameters: %w", path, err)
	}
	return f.Meta, nil
}

// Apply copies the file's tensors into params by name, all or nothing.
func (f *File) Apply(params []*nn.Param) error {
	byName := make(map[string]*tensor.Matrix, len(f.Tensors))
	for _, t := range f.Tensors {
		byName[t.Name] = t.Value
	}
	var problems []error
	want := map[string]bool{}
	for _, p := range params {
		want[p.Name] = true
		m, ok := byName[p.Name]
		if !ok {
			problems = append(problems, fmt.Errorf("parameter %s (%s) missing from checkpoint", p.Name, p.Value.Shape()))
			continue
		}
		if m.Rows != p.Value.Rows || m.Cols != p.Value.Cols {
			problems = append(problems, fmt.Errorf("parameter %s: checkpoint shape %s, model shape %s", p.Name, m.Shape(), p.Value.Shape()))
		}
	}
	for _, t := range f.Tensors {
		if !want[t.Name] {
			problems = append(problems, fmt.Errorf("checkpoint parameter %s (%s) not in the model", t.Name, t.Value.Shape()))
		}
	}
	if len(problems) > 0 {
		return errors.Join(problems...)
	}
	for _, p := range params {
		copy(p.Value.Data, byName[p.Name].Data)
	}
	return nil
}
