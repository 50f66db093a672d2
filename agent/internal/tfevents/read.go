package tfevents

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"

	"google.golang.org/protobuf/encoding/protowire"
)

// Event is what an event this package writes holds: its step and either scalars (tag -> value),
// a SessionLog, or the text of a text summary.
type Event struct {
	Step    int64
	Scalars map[string]float32
	Session bool
	Text    string
}

// ReadDir reads every event file of dir, in name order (the order one host wrote them in).
func ReadDir(dir string) ([][]Event, error) {
	paths, err := filepath.Glob(filepath.Join(dir, FilePrefix+"*"))
	if err != nil {
		return nil, err
	}
	slices.Sort(paths)
	var out [][]Event
	for _, p := range paths {
		evs, err := ReadFile(p)
		if err != nil {
			return nil, err
		}
		out = append(out, evs)
	}
	return out, nil
}

// ReadFile decodes every event of the event file at path.
func ReadFile(path string) ([]Event, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	recs, err := ReadRecords(fh)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	evs := make([]Event, 0, len(recs))
	for i, r := range recs {
		ev, err := Decode(r)
		if err != nil {
			return nil, fmt.Errorf("%s: event %d: %w", path, i, err)
		}
		evs = append(evs, ev)
	}
	return evs, nil
}

// Decode decodes the fields of one tensorflow.Event that this package writes.
func Decode(b []byte) (Event, error) {
	ev := Event{Scalars: map[string]float32{}}
	err := fields(b, func(num protowire.Number, v uint64, sub []byte) error {
		switch num {
		case eventStep:
			ev.Step = int64(v)
		case eventSessionLog:
			ev.Session = true
		case eventSummary:
			return fields(sub, func(_ protowire.Number, _ uint64, val []byte) error {
				return decodeValue(val, &ev)
			})
		}
		return nil
	})
	return ev, err
}

// decodeValue adds one Summary.Value to ev: a simple scalar, or a text tensor.
func decodeValue(val []byte, ev *Event) error {
	var tag string
	var x float32
	simple := false
	err := fields(val, func(num protowire.Number, v uint64, s []byte) error {
		switch num {
		case valueTag:
			tag = string(s)
		case valueSimpleValue:
			x, simple = math.Float32frombits(uint32(v)), true
		case valueTensor:
			return fields(s, func(num protowire.Number, _ uint64, s []byte) error {
				if num == tensorStringVal {
					ev.Text = string(s)
				}
				return nil
			})
		}
		return nil
	})
	if simple {
		ev.Scalars[tag] = x
	}
	return err
}

// fields calls f with each field of the message b: varints and fixed values in v, bytes in sub.
func fields(b []byte, f func(num protowire.Number, v uint64, sub []byte) error) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return fmt.Errorf("%w: tag: %w", ErrCorrupt, protowire.ParseError(n))
		}
		b = b[n:]
		var v uint64
		var sub []byte
		switch typ {
		case protowire.VarintType:
			v, n = protowire.ConsumeVarint(b)
		case protowire.Fixed32Type:
			var x uint32
			x, n = protowire.ConsumeFixed32(b)
			v = uint64(x)
		case protowire.Fixed64Type:
			v, n = protowire.ConsumeFixed64(b)
		case protowire.BytesType:
			sub, n = protowire.ConsumeBytes(b)
		default:
			return fmt.Errorf("%w: field %d: wire type %d", ErrCorrupt, num, typ)
		}
		if n < 0 {
			return fmt.Errorf("%w: field %d: %w", ErrCorrupt, num, protowire.ParseError(n))
		}
		b = b[n:]
		if err := f(num, v, sub); err != nil {
			return err
		}
	}
	return nil
}
