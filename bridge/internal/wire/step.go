package wire

import (
	"encoding/binary"
	"math"

	"github.com/sparsepcl/sparsepcl/envs"
)

// The step request and reply are the only messages sent at the rate of env steps, so they are
// encoded and decoded here by hand (the reflection codec of msgpack was about a sixth of the
// client's CPU per step). Both are the exact schemas of PROTOCOL.md; a reply that is anything other
// than a plain successful step (an error, infos, an unexpected key or type) is left to the generic
// decoder, so errors read the same either way.

// AppendStepRequest appends the msgpack encoding of
//
//	{"op": "step", "handle": h, "lo": lo, "hi": hi, "actions": {"dtype": d, "shape": [rows, size], "data": bytes}}
//
// with the action values (rows*size of them, already validated) written straight into the bin.
func AppendStepRequest(dst []byte, handle int64, lo, hi int, actions envs.Array, d envs.DType, rows, size int) []byte {
	dst = append(dst, 0x85)
	dst = appendStr(dst, "op")
	dst = appendStr(dst, "step")
	dst = appendStr(dst, "handle")
	dst = appendInt(dst, handle)
	dst = appendStr(dst, "lo")
	dst = appendInt(dst, int64(lo))
	dst = appendStr(dst, "hi")
	dst = appendInt(dst, int64(hi))
	dst = appendStr(dst, "actions")
	dst = append(dst, 0x83)
	dst = appendStr(dst, "dtype")
	dst = appendStr(dst, d.String())
	dst = appendStr(dst, "shape")
	dst = append(dst, 0x92)
	dst = appendInt(dst, int64(rows))
	dst = appendInt(dst, int64(size))
	dst = appendStr(dst, "data")
	n := rows * size * ItemSize(d)
	dst = appendBinHeader(dst, n)
	start := len(dst)
	dst = append(dst, make([]byte, n)...)
	putValues(dst[start:], actions, d)
	return dst
}

// putValues writes the row-major values of a as little-endian dtype d into buf (len: values*ItemSize).
func putValues(buf []byte, a envs.Array, d envs.DType) {
	switch d {
	case envs.Float64:
		for i := range len(buf) / 8 {
			binary.LittleEndian.PutUint64(buf[8*i:], math.Float64bits(a.Floats[i]))
		}
	case envs.Float32:
		for i := range len(buf) / 4 {
			binary.LittleEndian.PutUint32(buf[4*i:], math.Float32bits(float32(a.Floats[i])))
		}
	case envs.Int64:
		for i := range len(buf) / 8 {
			binary.LittleEndian.PutUint64(buf[8*i:], uint64(a.Ints[i]))
		}
	case envs.Int32:
		for i := range len(buf) / 4 {
			binary.LittleEndian.PutUint32(buf[4*i:], uint32(int32(a.Ints[i])))
		}
	default: // int8, uint8, bool: one byte
		for i := range buf {
			buf[i] = byte(a.Ints[i])
		}
	}
}

func appendStr(dst []byte, s string) []byte {
	switch n := len(s); {
	case n < 32:
		dst = append(dst, 0xa0|byte(n))
	case n < 1<<8:
		dst = append(dst, 0xd9, byte(n))
	case n < 1<<16:
		dst = append(dst, 0xda, byte(n>>8), byte(n))
	default:
		dst = append(dst, 0xdb)
		dst = binary.BigEndian.AppendUint32(dst, uint32(n))
	}
	return append(dst, s...)
}

func appendInt(dst []byte, v int64) []byte {
	switch {
	case v >= 0 && v < 128:
		return append(dst, byte(v))
	case v >= -32 && v < 0:
		return append(dst, byte(v))
	case v >= 0 && v <= math.MaxUint32:
		return binary.BigEndian.AppendUint32(append(dst, 0xce), uint32(v))
	case v >= math.MinInt32 && v < 0:
		return binary.BigEndian.AppendUint32(append(dst, 0xd2), uint32(int32(v)))
	default:
		return binary.BigEndian.AppendUint64(append(dst, 0xd3), uint64(v))
	}
}

func appendBinHeader(dst []byte, n int) []byte {
	switch {
	case n < 1<<8:
		return append(dst, 0xc4, byte(n))
	case n < 1<<16:
		return append(dst, 0xc5, byte(n>>8), byte(n))
	default:
		return binary.BigEndian.AppendUint32(append(dst, 0xc6), uint32(n))
	}
}

// decodeFast decodes a successful step reply without infos into r, its arrays aliasing b. It
// reports false, leaving r in any state, for anything else.
func (r *StepReply) decodeFast(b []byte) bool {
	rd := mpReader{b: b}
	n := rd.mapLen()
	ok, sawResult := false, false
	for range n {
		switch string(rd.str()) {
		case "ok":
			ok = rd.boolean()
		case "result":
			sawResult = r.decodeResult(&rd)
		default: // "error", or not a reply of this schema
			return false
		}
		if rd.bad {
			return false
		}
	}
	return ok && sawResult && !rd.bad && rd.i == len(b)
}

func (r *StepReply) decodeResult(rd *mpReader) bool {
	// The four arrays are keys 0 to 3; then infos (4), env_seconds (5), server_seconds (6).
	arrays := [4]struct {
		key string
		dst *Array
	}{{"obs", &r.Obs}, {"rewards", &r.Rewards}, {"terminated", &r.Terminated}, {"truncated", &r.Truncated}}
	var seen [7]bool
	for range rd.mapLen() {
		key := rd.str()
		k := -1
		for i, a := range arrays {
			if string(key) == a.key {
				k = i
				rd.array(a.dst)
				break
			}
		}
		switch string(key) {
		case "infos":
			k = 4
			if !rd.null() { // per-copy infos: the generic decoder's job
				return false
			}
		case "env_seconds":
			k = 5
			r.EnvSeconds = rd.float()
		case "server_seconds": // optional: servers before 0.3.0 do not send it
			k = 6
			r.ServerSeconds = rd.float()
		}
		if k < 0 || seen[k] || rd.bad {
			return false
		}
		seen[k] = true
	}
	return seen[0] && seen[1] && seen[2] && seen[3] && seen[4] && seen[5]
}

// mpReader reads the few msgpack types of a step reply; any other byte sets bad.
type mpReader struct {
	b   []byte
	i   int
	bad bool
}

func (rd *mpReader) take(n int) []byte {
	if n < 0 || n > len(rd.b)-rd.i {
		rd.bad = true
		return nil
	}
	s := rd.b[rd.i : rd.i+n]
	rd.i += n
	return s
}

// byte1 reads one byte; past the end it sets bad and returns a byte msgpack never uses.
func (rd *mpReader) byte1() byte {
	if s := rd.take(1); s != nil {
		return s[0]
	}
	return 0xc1
}

// beUint reads an n-byte big-endian unsigned integer (n <= 4: lengths and dimensions).
func (rd *mpReader) beUint(n int) int {
	s := rd.take(n)
	v := 0
	for _, c := range s {
		v = v<<8 | int(c)
	}
	return v
}

func (rd *mpReader) mapLen() int { return rd.containerLen(0x80, 0xde) }

func (rd *mpReader) arrayLen() int { return rd.containerLen(0x90, 0xdc) }

// containerLen reads a map or array header: the fix form (fix | n, n < 16) or the 16-bit form.
func (rd *mpReader) containerLen(fix, long16 byte) int {
	switch c := rd.byte1(); {
	case c&0xf0 == fix:
		return int(c & 0x0f)
	case c == long16:
		return rd.beUint(2)
	default:
		rd.bad = true
		return 0
	}
}

// str returns a string's bytes (aliasing the message); callers switch on string(...) of it, which
// does not copy.
func (rd *mpReader) str() []byte {
	var n int
	switch c := rd.byte1(); {
	case c&0xe0 == 0xa0:
		n = int(c & 0x1f)
	case c == 0xd9:
		n = rd.beUint(1)
	case c == 0xda:
		n = rd.beUint(2)
	default:
		rd.bad = true
		return nil
	}
	return rd.take(n)
}

func (rd *mpReader) bin() []byte {
	var n int
	switch rd.byte1() {
	case 0xc4:
		n = rd.beUint(1)
	case 0xc5:
		n = rd.beUint(2)
	case 0xc6:
		n = rd.beUint(4)
	default:
		rd.bad = true
		return nil
	}
	return rd.take(n)
}

func (rd *mpReader) boolean() bool {
	switch rd.byte1() {
	case 0xc3:
		return true
	case 0xc2:
		return false
	default:
		rd.bad = true
		return false
	}
}

func (rd *mpReader) null() bool {
	if rd.i < len(rd.b) && rd.b[rd.i] == 0xc0 {
		rd.i++
		return true
	}
	return false
}

// count reads a non-negative integer of at most 32 bits (a dimension); anything else sets bad.
func (rd *mpReader) count() int {
	switch c := rd.byte1(); {
	case c < 0x80:
		return int(c)
	case c == 0xcc:
		return rd.beUint(1)
	case c == 0xcd:
		return rd.beUint(2)
	case c == 0xce:
		return rd.beUint(4)
	default:
		rd.bad = true
		return 0
	}
}

func (rd *mpReader) float() float64 {
	switch c := rd.byte1(); {
	case c == 0xcb:
		if s := rd.take(8); s != nil {
			return math.Float64frombits(binary.BigEndian.Uint64(s))
		}
	case c == 0xca:
		if s := rd.take(4); s != nil {
			return float64(math.Float32frombits(binary.BigEndian.Uint32(s)))
		}
	}
	rd.bad = true
	return 0
}

// array reads {"dtype", "shape", "data"} in any order into w (Shape reuses w's backing array).
func (rd *mpReader) array(w *Array) {
	n := rd.mapLen()
	if n != 3 {
		rd.bad = true
		return
	}
	var seen [3]bool
	for range n {
		k := -1
		switch string(rd.str()) {
		case "dtype":
			k = 0
			w.DType = dtypeName(rd.str())
		case "shape":
			k = 1
			dims := rd.arrayLen()
			if dims > 8 {
				rd.bad = true
				return
			}
			w.Shape = w.Shape[:0]
			for range dims {
				w.Shape = append(w.Shape, rd.count())
			}
		case "data":
			k = 2
			w.Data = rd.bin()
		}
		if k < 0 || seen[k] || rd.bad {
			rd.bad = true
			return
		}
		seen[k] = true
	}
}

// dtypeName returns a dtype name as a string without allocating for the names the protocol knows;
// others are copied, to be rejected by CheckArray.
func dtypeName(b []byte) string {
	switch string(b) {
	case "float64":
		return "float64"
	case "float32":
		return "float32"
	case "int64":
		return "int64"
	case "int32":
		return "int32"
	case "int8":
		return "int8"
	case "uint8":
		return "uint8"
	case "bool":
		return "bool"
	}
	return string(b)
}
