//go:build !cgo

package tensor

import (
	"errors"

	"gonum.org/v1/gonum/blas"
)

func loadOpenBLAS() (blas.Float32, string, error) {
	return nil, "", errors.New("built without cgo (CGO_ENABLED=0), so OpenBLAS cannot be loaded")
}
