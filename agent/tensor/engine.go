package tensor

import (
	"fmt"
	"os"
	"strings"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
)

// EnvBackend is the environment variable that selects the BLAS backend:
// "auto" (default), "openblas" or "gonum".
const EnvBackend = "SPARSEPCL_BLAS"

// Engine performs the matrix products of the learner on one BLAS backend.
// It is safe for concurrent use when its backend is (both are).
type Engine struct {
	impl blas.Float32
	name string
}

// GonumEngine returns the pure-Go engine; it always works.
func GonumEngine() *Engine {
	return &Engine{impl: gonum.Implementation{}, name: "gonum (pure Go)"}
}

// OpenBLASEngine loads OpenBLAS at run time, or returns an error saying why
// it could not (no cgo, library not found, symbol missing).
func OpenBLASEngine() (*Engine, error) {
	impl, desc, err := loadOpenBLAS()
	if err != nil {
		return nil, fmt.Errorf("tensor: openblas backend: %w", err)
	}
	return &Engine{impl: impl, name: desc}, nil
}

// NewEngine resolves the backend from SPARSEPCL_BLAS (see the package doc).
func NewEngine() (*Engine, error) {
	return EngineFor(os.Getenv(EnvBackend))
}

// EngineFor resolves a backend by name: "", "auto", "openblas" or "gonum".
func EngineFor(name string) (*Engine, error) {
	switch strings.ToLower(strings.TrimSpace(name)) {
	case "", "auto":
		if e, err := OpenBLASEngine(); err == nil {
			return e, nil
		}
		return GonumEngine(), nil
	case "openblas":
		return OpenBLASEngine()
	case "gonum":
		return GonumEngine(), nil
	default:
		return nil, fmt.Errorf("tensor: unknown BLAS backend %q in %s (want auto, openblas or gonum)", name, EnvBackend)
	}
}

// Backend describes the backend, e.g. "openblas (libopenblas.so.0, 2 threads)".
func (e *Engine) Backend() string { return e.name }

// BLAS returns the underlying gonum-compatible implementation.
func (e *Engine) BLAS() blas.Float32 { return e.impl }

func trans(t bool) blas.Transpose {
	if t {
		return blas.Trans
	}
	return blas.NoTrans
}

// MatMul computes dst = alpha * op(a) * op(b) + beta * dst, where op
// transposes when the matching flag is set. Shapes are checked and a
// mismatch is an error naming them.
func (e *Engine) MatMul(dst *Matrix, a *Matrix, transA bool, b *Matrix, transB bool, alpha, beta float32) error {
	if dst == nil || a == nil || b == nil {
		return fmt.Errorf("tensor: matmul: nil operand (dst %s, a %s, b %s)", dst.Shape(), a.Shape(), b.Shape())
	}
	m, k := a.Rows, a.Cols
	if transA {
		m, k = k, m
	}
	kb, n := b.Rows, b.Cols
	if transB {
		kb, n = n, kb
	}
	if k != kb || dst.Rows != m || dst.Cols != n {
		return fmt.Errorf("tensor: matmul: op(a) %dx%d (a %s, trans %v) times op(b) %dx%d (b %s, trans %v) into dst %s",
			m, k, a.Shape(), transA, kb, n, b.Shape(), transB, dst.Shape())
	}
	if m == 0 || n == 0 {
		return nil
	}
	if k == 0 {
		if beta == 0 {
			dst.Zero()
		} else if beta != 1 {
			for i := range dst.Data {
				dst.Data[i] *= beta
			}
		}
		return nil
	}
	e.impl.Sgemm(trans(transA), trans(transB), m, n, k, alpha,
		a.Data, max(a.Cols, 1), b.Data, max(b.Cols, 1), beta, dst.Data, max(dst.Cols, 1))
	return nil
}
