package tensor

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/sparsepcl/sparsepcl/agent/internal/cputime"
)

// TestFewRowsMatchesOpenBLAS requires the few-rows kernel to give OpenBLAS's own sgemm's bits
// (the engine's products with it switched off) at every shape of a grid that the kernel takes
// (1 to 8 rows; inner sizes 1 to 256 with the networks' 64 and 65; |A| = 729 and 15,625 and odd
// widths), on inputs with the magnitudes of a network's (and with zeros and negative zeros, which
// the sum's sign must keep). Run it with OPENBLAS_NUM_THREADS=1 too: the shapes taken differ.
func TestFewRowsMatchesOpenBLAS(t *testing.T) {
	e := openBLASForTest(t)
	o, ok := e.impl.(*openBLAS)
	if ok && !o.few && fewRowsSupported() && o.core != "" && !fewRowsMatchesCore(o.core) {
		// OpenBLAS runs a core here (an AVX-512 one) whose sums the kernel does not reproduce,
		// so the engine leaves the kernel off. This CPU also runs OpenBLAS's Haswell core: check
		// the kernel against it in a process whose OpenBLAS is told to run that core.
		if os.Getenv("OPENBLAS_CORETYPE") != "" {
			t.Fatalf("OPENBLAS_CORETYPE=%s runs core %s, which the few-rows kernel does not reproduce", os.Getenv("OPENBLAS_CORETYPE"), o.core)
		}
		cmd := exec.Command(os.Args[0], "-test.run=^TestFewRowsMatchesOpenBLAS$", "-test.count=1", "-test.v")
		cmd.Env = append(os.Environ(), "OPENBLAS_CORETYPE=Haswell")
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "--- PASS: TestFewRowsMatchesOpenBLAS") {
			t.Fatalf("with OpenBLAS on its Haswell core (this CPU's own core is %s): %v\n%s", o.core, err, out)
		}
		return
	}
	if !ok || !o.few {
		t.Skip("the few-rows kernel does not run on this CPU")
	}
	plain := &Engine{impl: &openBLAS{sgemm: o.sgemm, sgemv: o.sgemv}, name: "openblas without the few-rows kernel"}
	rng := rand.New(rand.NewPCG(7, 8))
	type shape struct{ m, k, n int }
	var shapes []shape
	for m := 1; m <= fewRowsMax; m++ {
		for _, k := range []int{1, 17, 64, 65, 256} {
			for _, n := range []int{256, 263, 729, 15625} {
				if (n < 15625 || k == 64) && fewRows(false, false, m, n, k, 1, 0, o.threads) {
					shapes = append(shapes, shape{m, k, n})
				}
			}
		}
	}
	// The sampler's shapes with 1 copy must take the kernel whatever the thread count, and with
	// 8 copies when OpenBLAS runs threads.
	for _, s := range []shape{{1, 64, 729}, {1, 64, 15625}, {8, 64, 729}, {8, 64, 15625}} {
		if (s.m <= 3 || o.threads >= 2) && !fewRows(false, false, s.m, s.n, s.k, 1, 0, o.threads) {
			t.Errorf("shape %+v does not take the kernel (OpenBLAS threads %d)", s, o.threads)
		}
	}
	for _, s := range shapes {
		t.Run(fmt.Sprintf("%dx%dx%d", s.m, s.k, s.n), func(t *testing.T) {
			for trial := range 3 {
				x, w := randMatrix(rng, s.m, s.k), randMatrix(rng, s.k, s.n)
				for i := range w.Data {
					w.Data[i] *= 0.05
					switch rng.IntN(50) {
					case 0:
						w.Data[i] = 0
					case 1:
						w.Data[i] = float32(math.Copysign(0, -1))
					}
				}
				if trial == 2 {
					// A row of zeros times a column of zeros: the sum is -0 or +0 by its terms.
					for i := range x.Data[:s.k] {
						x.Data[i] = float32(math.Copysign(0, -1))
					}
				}
				got, want := New(s.m, s.n), New(s.m, s.n)
				for i := range got.Data {
					got.Data[i], want.Data[i] = float32(math.NaN()), float32(math.NaN())
				}
				if err := e.MatMul(got, x, false, w, false, 1, 0); err != nil {
					t.Fatal(err)
				}
				if err := plain.MatMul(want, x, false, w, false, 1, 0); err != nil {
					t.Fatal(err)
				}
				for i := range got.Data {
					if math.Float32bits(got.Data[i]) != math.Float32bits(want.Data[i]) {
						t.Fatalf("trial %d: entry (%d, %d) is %v (%#x), OpenBLAS gives %v (%#x)", trial, i/s.n, i%s.n,
							got.Data[i], math.Float32bits(got.Data[i]), want.Data[i], math.Float32bits(want.Data[i]))
					}
				}
			}
		})
	}
}

// BenchmarkFewRows times the sampler's forward of the output layer (n rows x 64 times 64 x |A|)
// with the few-rows kernel and with OpenBLAS's sgemm, alternately in the same run, and reports
// each in microseconds per call and their ratio (speedup; cpu-speedup in process CPU time).
func BenchmarkFewRows(b *testing.B) {
	e, err := OpenBLASEngine()
	if err != nil {
		b.Skip(err)
	}
	o := e.impl.(*openBLAS)
	if !o.few {
		b.Skip("the few-rows kernel does not run on this CPU")
	}
	plain := &Engine{impl: &openBLAS{sgemm: o.sgemm, sgemv: o.sgemv}}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, k := range []int{729, 15625} {
		for _, n := range []int{1, 8} {
			b.Run(fmt.Sprintf("A=%d/rows=%d", k, n), func(b *testing.B) {
				x, w, y := randMatrix(rng, n, 64), randMatrix(rng, 64, k), New(n, k)
				var tFew, tBLAS, cFew, cBLAS float64
				for b.Loop() {
					t, c := timeIt(func() { _ = e.MatMul(y, x, false, w, false, 1, 0) })
					tFew, cFew = tFew+t, cFew+c
					t, c = timeIt(func() { _ = plain.MatMul(y, x, false, w, false, 1, 0) })
					tBLAS, cBLAS = tBLAS+t, cBLAS+c
				}
				b.ReportMetric(tFew/float64(b.N)*1e6, "us-few")
				b.ReportMetric(tBLAS/float64(b.N)*1e6, "us-openblas")
				b.ReportMetric(tBLAS/tFew, "speedup")
				b.ReportMetric(cBLAS/cFew, "cpu-speedup")
			})
		}
	}
}

// timeIt runs f and returns its wall time and the CPU time of the whole process meanwhile (every
// thread: OpenBLAS's too), in seconds.
func timeIt(f func()) (wall, cpu float64) {
	c0, t0 := cputime.Process(), time.Now()
	f()
	return time.Since(t0).Seconds(), (cputime.Process() - c0).Seconds()
}

func TestFewRowsMatchesCore(t *testing.T) {
	for _, tc := range []struct {
		core string
		want bool
	}{
		{"Haswell", true}, {"Zen", true}, {"zen ", true},
		{"SkylakeX", false}, {"Cooperlake", false}, {"SapphireRapids", false}, {"Sandybridge", false}, {"", false},
	} {
		if got := fewRowsMatchesCore(tc.core); got != tc.want {
			t.Errorf("fewRowsMatchesCore(%q) = %v, want %v", tc.core, got, tc.want)
		}
	}
}
