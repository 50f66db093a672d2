//go:build cgo

package tensor

/*
#cgo LDFLAGS: -ldl
#include <dlfcn.h>
#include <stdlib.h>

typedef void (*sgemm_fn)(int, int, int, int, int, int, float, const float*, int,
                         const float*, int, float, float*, int);
typedef void (*sgemv_fn)(int, int, int, int, float, const float*, int,
                         const float*, int, float, float*, int);
typedef int (*getint_fn)(void);

static void call_sgemm(void *f, int order, int ta, int tb, int m, int n, int k,
                       float alpha, const float *a, int lda, const float *b, int ldb,
                       float beta, float *c, int ldc) {
	((sgemm_fn)f)(order, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

static void call_sgemv(void *f, int order, int ta, int m, int n, float alpha,
                       const float *a, int lda, const float *x, int incx,
                       float beta, float *y, int incy) {
	((sgemv_fn)f)(order, ta, m, n, alpha, a, lda, x, incx, beta, y, incy);
}

static int call_getint(void *f) { return ((getint_fn)f)(); }

typedef char *(*getstr_fn)(void);

static const char *call_getstr(void *f) { return ((getstr_fn)f)(); }

static void *open_lib(const char *name) { return dlopen(name, RTLD_NOW | RTLD_LOCAL); }
*/
import "C"

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"unsafe"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
)

// CBLAS enum values.
const (
	cblasRowMajor = 101
	cblasNoTrans  = 111
	cblasTrans    = 112
)

// libraryCandidates are tried in order; the first one that has cblas_sgemm wins.
var libraryCandidates = []string{"libopenblas.so.0", "libopenblas.so", "libblas.so.3"}

// openBLAS routes Sgemm and Sgemv to a dlopen()ed CBLAS; everything else
// falls through to the embedded pure-Go implementation.
type openBLAS struct {
	gonum.Implementation
	sgemm unsafe.Pointer
	sgemv unsafe.Pointer
	// few is set when the CPU runs the few-rows kernel (fewrows.go), which then takes the
	// products it is made for; threads is OpenBLAS's thread count (0: unknown), which decides
	// which of them give OpenBLAS's bits (fewRows). wide is set when the CPU runs the wide
	// kernel (wide.go).
	few, wide bool
	threads   int
	core      string // openblas_get_corename: the kernels OpenBLAS picked for this CPU
}

func dlerror() string {
	if e := C.dlerror(); e != nil {
		return C.GoString(e)
	}
	return "unknown dlerror"
}

// threadTimeoutEnv is what OpenBLAS reads when it loads for how long an idle BLAS thread spins
// (2^n cycles) before it sleeps. Its default, 2^28 (a tenth of a second), keeps a second BLAS
// thread spinning through the row passes between the products, on the core the Go workers need:
// on two threads the 3^6 training step took 16 ms against 9 with the smallest value, 4
// (docs/speed.md, issue 49). loadOpenBLAS sets that before the library loads, unless the
// environment already says.
const threadTimeoutEnv, threadTimeout = "OPENBLAS_THREAD_TIMEOUT", "4"

func loadOpenBLAS() (blas.Float32, string, error) {
	if _, set := os.LookupEnv(threadTimeoutEnv); !set {
		if err := os.Setenv(threadTimeoutEnv, threadTimeout); err != nil {
			return nil, "", fmt.Errorf("set %s: %w", threadTimeoutEnv, err)
		}
	}
	var errs []string
	for _, lib := range libraryCandidates {
		cname := C.CString(lib)
		h := C.open_lib(cname)
		C.free(unsafe.Pointer(cname))
		if h == nil {
			errs = append(errs, dlerror())
			continue
		}
		sym := func(name string) unsafe.Pointer {
			cs := C.CString(name)
			defer C.free(unsafe.Pointer(cs))
			return C.dlsym(h, cs)
		}
		impl := &openBLAS{sgemm: sym("cblas_sgemm"), sgemv: sym("cblas_sgemv"), few: fewRowsSupported(), wide: fewRowsSupported()}
		if impl.sgemm == nil || impl.sgemv == nil {
			errs = append(errs, lib+": no cblas_sgemm/cblas_sgemv")
			C.dlclose(h)
			continue
		}
		desc := "cblas (" + lib + ")"
		if f := sym("openblas_get_num_threads"); f != nil {
			impl.threads = int(C.call_getint(f))
			desc = fmt.Sprintf("openblas (%s, %d threads)", lib, impl.threads)
		} else {
			impl.few = false // another CBLAS: its sums may run in another order
		}
		if f := sym("openblas_get_corename"); impl.few && f != nil {
			core := C.GoString(C.call_getstr(f))
			impl.core = core
			// The few-rows kernel sums in the order of OpenBLAS's AVX2 sgemm kernel, which its
			// Haswell and Zen cores run; on an AVX-512 core (SkylakeX, Cooperlake, ...) OpenBLAS
			// sums in another order, and the kernel would change the product's bits.
			impl.few = fewRowsMatchesCore(core)
			desc = fmt.Sprintf("openblas (%s, %d threads, core %s)", lib, impl.threads, core)
		}
		// The handle stays open for the life of the process: the function
		// pointers above point into it.
		return impl, desc, nil
	}
	return nil, "", errors.New(strings.Join(errs, "; "))
}

// span is how many elements a row-major rows x cols operand with leading
// dimension ld occupies.
func span(rows, cols, ld int) int {
	if rows == 0 || cols == 0 {
		return 0
	}
	return (rows-1)*ld + cols
}

func cblasOp(t blas.Transpose) C.int {
	if t == blas.NoTrans {
		return cblasNoTrans
	}
	return cblasTrans
}

// Sgemm has gonum's contract (row-major, panics on bad arguments) but runs cblas_sgemm.
func (o *openBLAS) Sgemm(tA, tB blas.Transpose, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	if m == 0 || n == 0 || k == 0 || (tA != blas.NoTrans && tA != blas.Trans) || (tB != blas.NoTrans && tB != blas.Trans) {
		o.Implementation.Sgemm(tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
		return
	}
	ar, ac := m, k
	if tA != blas.NoTrans {
		ar, ac = k, m
	}
	br, bc := k, n
	if tB != blas.NoTrans {
		br, bc = n, k
	}
	if m < 0 || n < 0 || k < 0 || lda < max(1, ac) || ldb < max(1, bc) || ldc < max(1, n) ||
		len(a) < span(ar, ac, lda) || len(b) < span(br, bc, ldb) || len(c) < span(m, n, ldc) {
		panic(fmt.Sprintf("tensor: openblas sgemm: bad arguments m=%d n=%d k=%d lda=%d ldb=%d ldc=%d len(a)=%d len(b)=%d len(c)=%d",
			m, n, k, lda, ldb, ldc, len(a), len(b), len(c)))
	}
	if o.few && lda == k && ldb == n && ldc == n && fewRows(tA != blas.NoTrans, tB != blas.NoTrans, m, n, k, alpha, beta, o.threads) {
		fewRowsProduct(m, n, k, a, b, c)
		return
	}
	if o.wide && lda == k && ldb == n && ldc == n && wide(tA != blas.NoTrans, tB != blas.NoTrans, m, n, k, alpha, beta) {
		wideProduct(m, n, k, a, b, c, nil)
		return
	}
	C.call_sgemm(o.sgemm, cblasRowMajor, cblasOp(tA), cblasOp(tB), C.int(m), C.int(n), C.int(k),
		C.float(alpha), (*C.float)(unsafe.Pointer(&a[0])), C.int(lda),
		(*C.float)(unsafe.Pointer(&b[0])), C.int(ldb), C.float(beta),
		(*C.float)(unsafe.Pointer(&c[0])), C.int(ldc))
}

// productRange computes c = a·b with the rows' range when the wide kernel takes the product
// (rangeProducer).
func (o *openBLAS) productRange(m, n, k int, a, b, c []float32, r *RowRange) bool {
	if !o.wide || !wide(false, false, m, n, k, 1, 0) {
		return false
	}
	wideProduct(m, n, k, a, b, c, r)
	return true
}

// Sgemv has gonum's contract but runs cblas_sgemv (unit strides only;
// other strides fall back to gonum).
func (o *openBLAS) Sgemv(tA blas.Transpose, m, n int, alpha float32, a []float32, lda int, x []float32, incX int, beta float32, y []float32, incY int) {
	if m <= 0 || n <= 0 || incX != 1 || incY != 1 || (tA != blas.NoTrans && tA != blas.Trans) {
		o.Implementation.Sgemv(tA, m, n, alpha, a, lda, x, incX, beta, y, incY)
		return
	}
	lenX, lenY := n, m
	if tA != blas.NoTrans {
		lenX, lenY = m, n
	}
	if lda < max(1, n) || len(a) < span(m, n, lda) || len(x) < lenX || len(y) < lenY {
		panic(fmt.Sprintf("tensor: openblas sgemv: bad arguments m=%d n=%d lda=%d len(a)=%d len(x)=%d len(y)=%d",
			m, n, lda, len(a), len(x), len(y)))
	}
	C.call_sgemv(o.sgemv, cblasRowMajor, cblasOp(tA), C.int(m), C.int(n), C.float(alpha),
		(*C.float)(unsafe.Pointer(&a[0])), C.int(lda), (*C.float)(unsafe.Pointer(&x[0])), 1,
		C.float(beta), (*C.float)(unsafe.Pointer(&y[0])), 1)
}

// wideKernel reports whether the wide kernel takes this engine's wide products (wideEngine).
func (o *openBLAS) wideKernel() bool { return o.wide }
