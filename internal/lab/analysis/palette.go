package analysis

import (
	"image/color"

	"github.com/sparsepcl/sparsepcl/agent/config"
)

// rgb is an opaque colour.
func rgb(r, g, b uint8) color.NRGBA { return color.NRGBA{R: r, G: g, B: b, A: 255} }

// shades are the colours of an algorithm's bands, in the order a figure uses them: sparse PCL in
// reds, oranges and browns, soft PCL in blues and purples, Tsallis PCL in greens. Every figure of
// every report draws with these, so sparse is the same colour everywhere; several shades each, so
// that a search over weights or settings has no two bands of one algorithm alike.
func shades(algo config.Algo) []color.NRGBA {
	switch algo {
	case config.AlgoSparse:
		return []color.NRGBA{rgb(0xd6, 0x27, 0x28), rgb(0xff, 0x7f, 0x0e), rgb(0x8c, 0x56, 0x4b), rgb(0xe3, 0x77, 0xc2),
			rgb(0xff, 0x98, 0x96), rgb(0x52, 0x1b, 0x1b), rgb(0xc4, 0x9c, 0x94), rgb(0xad, 0x49, 0x4a)}
	case config.AlgoSoft:
		return []color.NRGBA{rgb(0x1f, 0x77, 0xb4), rgb(0x17, 0xbe, 0xcf), rgb(0x94, 0x67, 0xbd), rgb(0x39, 0x3b, 0x79),
			rgb(0xae, 0xc7, 0xe8), rgb(0x08, 0x51, 0x9c), rgb(0xc5, 0xb0, 0xd5), rgb(0x52, 0x54, 0xa3)}
	}
	return []color.NRGBA{rgb(0x2c, 0xa0, 0x2c), rgb(0xbc, 0xbd, 0x22), rgb(0x00, 0x6d, 0x2c), rgb(0x98, 0xdf, 0x8a), rgb(0x74, 0xc4, 0x76)}
}

// Palette hands out colours per algorithm within one figure: the i-th band of an algorithm gets
// its i-th shade (cycling when there are more bands than shades).
type Palette map[config.Algo]int

func (p Palette) Next(algo config.Algo) color.NRGBA {
	s := shades(algo)
	c := s[p[algo]%len(s)]
	p[algo]++
	return c
}
