package wire

import (
	"errors"
	"fmt"
)

// Limits on a reply before the generic decoder (msgpack's reflection) sees it. That decoder sizes
// maps and slices from the lengths declared in the message, so a reply of a hundred bytes declaring
// an array of 2^32-1 elements would make it allocate gigabytes, and arrays nested millions deep would
// overflow its stack. scanReply walks the message once, without allocating, and refuses it unless:
//
//   - every declared length fits in the bytes that follow (an element takes at least one byte), so no
//     length sizes an allocation beyond the frame, which Config.MaxReplyBytes caps;
//   - it holds at most maxReplyItems values in all (the decoded form of a value costs tens of bytes
//     however short its encoding, so the frame size alone would still allow gigabytes);
//   - containers nest at most maxReplyDepth deep;
//   - it is exactly one value, with no extension types (the protocol uses none).
//
// The protocol's needs are far below these: the largest replies are arrays (one bin each), a space
// tree is at most maxSpaceDepth spaces deep (two containers per level), and infos hold a map per copy.
const (
	maxReplyItems = 1 << 20
	maxReplyDepth = 2*maxSpaceDepth + 16
)

// errBadMsgpack is wrapped by every refusal of scanReply.
var errBadMsgpack = errors.New("malformed msgpack")

// scanReply checks b against the limits above.
func scanReply(b []byte) error {
	s := mpScan{b: b, items: maxReplyItems}
	// The values still to read at each open container level (maps count keys and values).
	var stackBuf [32]int
	stack := append(stackBuf[:0], 1)
	for len(stack) > 0 {
		top := len(stack) - 1
		if stack[top] == 0 {
			stack = stack[:top]
			continue
		}
		stack[top]--
		n, err := s.value()
		if err != nil {
			return err
		}
		if n > 0 {
			if len(stack) >= maxReplyDepth {
				return fmt.Errorf("%w: containers nested deeper than %d", errBadMsgpack, maxReplyDepth)
			}
			stack = append(stack, n)
		}
	}
	if s.i != len(b) {
		return fmt.Errorf("%w: %d bytes after the value", errBadMsgpack, len(b)-s.i)
	}
	return nil
}

type mpScan struct {
	b     []byte
	i     int
	items int // values still allowed
}

func (s *mpScan) need(n int) error {
	if n < 0 || n > len(s.b)-s.i {
		return fmt.Errorf("%w: %d bytes declared at offset %d, %d left", errBadMsgpack, n, s.i, len(s.b)-s.i)
	}
	return nil
}

// uint reads an n-byte big-endian length (n <= 4).
func (s *mpScan) uint(n int) (int, error) {
	if err := s.need(n); err != nil {
		return 0, err
	}
	v := 0
	for _, c := range s.b[s.i : s.i+n] {
		v = v<<8 | int(c)
	}
	s.i += n
	return v, nil
}

// skip consumes n bytes of payload (a string, bin or number).
func (s *mpScan) skip(n int) error {
	if err := s.need(n); err != nil {
		return err
	}
	s.i += n
	return nil
}

// value reads one value's header (and skips a scalar's payload); for a container it returns the
// number of values it holds (keys and values for a map), which the caller reads next.
func (s *mpScan) value() (int, error) {
	if s.items--; s.items < 0 {
		return 0, fmt.Errorf("%w: more than %d values", errBadMsgpack, maxReplyItems)
	}
	if err := s.need(1); err != nil {
		return 0, err
	}
	c := s.b[s.i]
	s.i++
	switch {
	case c <= 0x7f || c >= 0xe0 || c == 0xc0 || c == 0xc2 || c == 0xc3: // fixints, nil, bools
		return 0, nil
	case c&0xe0 == 0xa0: // fixstr
		return 0, s.skip(int(c & 0x1f))
	case c&0xf0 == 0x90: // fixarray
		return s.container(int(c&0x0f), 1)
	case c&0xf0 == 0x80: // fixmap
		return s.container(int(c&0x0f), 2)
	}
	switch c {
	case 0xcc, 0xd0:
		return 0, s.skip(1)
	case 0xcd, 0xd1:
		return 0, s.skip(2)
	case 0xce, 0xd2, 0xca:
		return 0, s.skip(4)
	case 0xcf, 0xd3, 0xcb:
		return 0, s.skip(8)
	}
	if width, per, ok := lengthPrefixed(c); ok {
		n, err := s.uint(width)
		if err != nil {
			return 0, err
		}
		if per == 0 {
			return 0, s.skip(n)
		}
		return s.container(n, per)
	}
	return 0, fmt.Errorf("%w: type byte %#x at offset %d (extension types and 0xc1 are not used)", errBadMsgpack, c, s.i-1)
}

// lengthPrefixed says how a type byte with a length after it reads: the length's width in bytes,
// and what it counts (per 0: bytes of a string or bin; 1: array elements; 2: map entries, a key and
// a value each).
func lengthPrefixed(c byte) (width, per int, ok bool) {
	switch c {
	case 0xd9, 0xc4: // str8, bin8
		return 1, 0, true
	case 0xda, 0xc5: // str16, bin16
		return 2, 0, true
	case 0xdb, 0xc6: // str32, bin32
		return 4, 0, true
	case 0xdc: // array16
		return 2, 1, true
	case 0xdd: // array32
		return 4, 1, true
	case 0xde: // map16
		return 2, 2, true
	case 0xdf: // map32
		return 4, 2, true
	}
	return 0, 0, false
}

// container checks that n entries of per values each can fit in what is left, and returns n*per.
func (s *mpScan) container(n, per int) (int, error) {
	left := len(s.b) - s.i
	if n > left/per || n*per > s.items {
		return 0, fmt.Errorf("%w: container of %d entries at offset %d, with %d bytes and %d values left", errBadMsgpack, n, s.i, left, s.items)
	}
	return n * per, nil
}
