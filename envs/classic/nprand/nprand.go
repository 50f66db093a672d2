// Package nprand ports the parts of numpy's random module that Gymnasium's environments draw their
// initial states from: SeedSequence (entropy mixing and generate_state), the PCG64 bit generator
// (numpy's default, PCG XSL-RR 128/64) and Generator.random / Generator.uniform for doubles. For the
// same seed, New(seed) yields exactly the doubles that numpy.random.default_rng(seed) does, which is
// what gymnasium.utils.seeding.np_random(seed) builds.
//
// The generator is a small value type: copying it copies the stream. Nothing here allocates after
// construction, so environments can draw from it on their hot paths.
package nprand

import (
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/bits"
)

// SeedSequence constants, as numpy.random.bit_generator defines them.
const (
	poolSize = 4
	initA    = 0x43b0d7e5
	multA    = 0x931e8875
	initB    = 0x8b51f9dd
	multB    = 0x58f38ded
	mixMultL = 0xca01f9dd
	mixMultR = 0x4973f715
	xshift   = 16
)

// SeedSequence is numpy's SeedSequence without spawn keys and with the default pool size of 4.
type SeedSequence struct {
	pool [poolSize]uint32
}

// EntropyWords splits a non-negative integer seed into 32-bit words, least significant first, as
// numpy does (0 is the single word 0).
func EntropyWords(seed uint64) []uint32 {
	if seed>>32 == 0 {
		return []uint32{uint32(seed)}
	}
	return []uint32{uint32(seed), uint32(seed >> 32)}
}

func hashmix(value uint32, hashConst *uint32) uint32 {
	value ^= *hashConst
	*hashConst *= multA
	value *= *hashConst
	value ^= value >> xshift
	return value
}

func mix(x, y uint32) uint32 {
	r := mixMultL*x - mixMultR*y
	r ^= r >> xshift
	return r
}

// NewSeedSequence mixes entropy words (least significant first) into the pool, as
// numpy.random.SeedSequence(entropy) does.
func NewSeedSequence(entropy []uint32) SeedSequence {
	var s SeedSequence
	h := uint32(initA)
	for i := range poolSize {
		var w uint32
		if i < len(entropy) {
			w = entropy[i]
		}
		s.pool[i] = hashmix(w, &h)
	}
	for src := range poolSize {
		for dst := range poolSize {
			if src != dst {
				s.pool[dst] = mix(s.pool[dst], hashmix(s.pool[src], &h))
			}
		}
	}
	for src := poolSize; src < len(entropy); src++ {
		for dst := range poolSize {
			s.pool[dst] = mix(s.pool[dst], hashmix(entropy[src], &h))
		}
	}
	return s
}

// GenerateState32 fills out with uint32 words, as SeedSequence.generate_state(len(out), np.uint32).
func (s SeedSequence) GenerateState32(out []uint32) {
	h := uint32(initB)
	for i := range out {
		v := s.pool[i%poolSize]
		v ^= h
		h *= multB
		v *= h
		v ^= v >> xshift
		out[i] = v
	}
}

// GenerateState64 fills out with uint64 words, as SeedSequence.generate_state(len(out), np.uint64):
// the uint32 words of GenerateState32 in pairs, the first of each pair the low half.
func (s SeedSequence) GenerateState64(out []uint64) {
	h := uint32(initB)
	next := func(i int) uint32 {
		v := s.pool[i%poolSize]
		v ^= h
		h *= multB
		v *= h
		v ^= v >> xshift
		return v
	}
	for i := range out {
		lo := next(2 * i)
		hi := next(2*i + 1)
		out[i] = uint64(lo) | uint64(hi)<<32
	}
}

// PCG64 is numpy's PCG64 bit generator: a 128-bit LCG with the XSL-RR output function.
type PCG64 struct {
	stateHi, stateLo uint64
	incHi, incLo     uint64
}

const (
	mulHi = 0x2360ed051fc65da4
	mulLo = 0x4385df649fccf645
)

func (p *PCG64) step() {
	hi, lo := bits.Mul64(p.stateLo, mulLo)
	hi += p.stateHi*mulLo + p.stateLo*mulHi
	var c uint64
	p.stateLo, c = bits.Add64(lo, p.incLo, 0)
	p.stateHi, _ = bits.Add64(hi, p.incHi, c)
}

// NewPCG64 seeds a PCG64 as numpy does from four uint64 words of SeedSequence state: the initial
// state is words[0]<<64 | words[1], the stream words[2]<<64 | words[3].
func NewPCG64(words [4]uint64) PCG64 {
	var p PCG64
	// inc = (initseq << 1) | 1
	p.incHi = words[2]<<1 | words[3]>>63
	p.incLo = words[3]<<1 | 1
	p.step()
	var c uint64
	p.stateLo, c = bits.Add64(p.stateLo, words[1], 0)
	p.stateHi, _ = bits.Add64(p.stateHi, words[0], c)
	p.step()
	return p
}

// State returns the 128-bit state and increment as (hi, lo) halves, for comparing with
// numpy's bit_generator.state.
func (p *PCG64) State() (stateHi, stateLo, incHi, incLo uint64) {
	return p.stateHi, p.stateLo, p.incHi, p.incLo
}

// Uint64 is the next raw output (numpy's random_raw).
func (p *PCG64) Uint64() uint64 {
	p.step()
	x := p.stateHi ^ p.stateLo
	return bits.RotateLeft64(x, -int(p.stateHi>>58))
}

// Generator is numpy.random.Generator over PCG64, for the double draws Gymnasium uses.
type Generator struct {
	bg PCG64
}

// New returns the generator numpy.random.default_rng(seed) builds; seed must be >= 0, as
// Gymnasium requires.
func New(seed int64) (Generator, error) {
	if seed < 0 {
		return Generator{}, fmt.Errorf("nprand: seed must be a non-negative integer, got %d", seed)
	}
	return FromEntropy(EntropyWords(uint64(seed))), nil
}

// FromEntropy seeds a generator from SeedSequence entropy words (least significant first).
func FromEntropy(entropy []uint32) Generator {
	ss := NewSeedSequence(entropy)
	var w [4]uint64
	ss.GenerateState64(w[:])
	return Generator{bg: NewPCG64(w)}
}

// Random returns a generator seeded from 128 bits of operating-system entropy, as
// default_rng(None) does.
func Random() Generator {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		// crypto/rand does not fail on supported platforms; keep going with a fixed stream if it does.
		return FromEntropy([]uint32{0})
	}
	ent := make([]uint32, 4)
	for i := range ent {
		ent[i] = binary.LittleEndian.Uint32(b[4*i:])
	}
	return FromEntropy(ent)
}

// Float64 is Generator.random(): a double in [0, 1) from the top 53 bits of one raw output.
func (g *Generator) Float64() float64 {
	return float64(g.bg.Uint64()>>11) * (1.0 / 9007199254740992.0)
}

// ErrRange is returned by CheckUniform for bounds whose span numpy refuses.
var ErrRange = errors.New("nprand: high - low range exceeds valid bounds")

// CheckUniform reports the errors numpy's Generator.uniform raises for bounds low, high: a span
// high-low that is not finite (OverflowError there) or negative (ValueError there).
func CheckUniform(low, high float64) error {
	r := high - low
	if math.IsNaN(r) || math.IsInf(r, 0) {
		return ErrRange
	}
	if r < 0 {
		return fmt.Errorf("nprand: high - low < 0 (low %v, high %v)", low, high)
	}
	return nil
}

// Uniform is one draw of Generator.uniform(low, high): low + (high-low)*random(). Call
// CheckUniform first for bounds that come from users.
func (g *Generator) Uniform(low, high float64) float64 {
	rng := high - low
	return low + float64(rng*g.Float64())
}
