// Package tensor holds the float32 dense matrices of the learner and the
// BLAS engine that multiplies them.
//
// # Matrices
//
// A Matrix is row-major and dense (the stride is always Cols), so a block of
// consecutive rows is itself a Matrix that shares memory (RowSlice). The
// networks lay sequences out time-major (row t*B+b), which makes the rows of
// one time step such a contiguous block.
//
// # Backends
//
// All products go through an *Engine, a value resolved once at start and
// passed to whatever multiplies; there is no package-level mutable state.
// An Engine wraps a gonum blas.Float32 implementation:
//
//   - "openblas": when the binary is built with cgo (the default wherever a C
//     compiler exists), NewEngine dlopen()s libopenblas.so.0 at run time
//     (falling back to libopenblas.so, then libblas.so.3) and routes Sgemm and
//     Sgemv to cblas_sgemm / cblas_sgemv. The type embeds gonum's
//     gonum.Implementation, so every other BLAS routine is gonum's. No build
//     tag and no link-time dependency: the same binary runs with or without
//     OpenBLAS installed. OpenBLAS picks its thread count itself: it honours
//     OPENBLAS_NUM_THREADS and otherwise uses all cores.
//   - "gonum": gonum's pure-Go implementation; always available, and the only
//     one in a !cgo build.
//
// The environment variable SPARSEPCL_BLAS selects: "auto" or empty (OpenBLAS
// if it loads, else gonum), "openblas" (an error if it cannot load) or
// "gonum". Engine.Backend says which one runs, for logs and run directories.
//
// # Own kernels
//
// On an OpenBLAS engine and a CPU with AVX2 and FMA, two shapes go to this package's own C
// kernels instead of cblas_sgemm: a few rows against a wide matrix (the sampler's forward: the
// few-rows kernel, OpenBLAS's bits) and many rows against a wide matrix with a short inner
// dimension (a 5^6 output layer in training: the wide kernel). The wide kernel can also report
// each row's range while the row is in cache (Engine.MatMulRange, RowRange).
package tensor
