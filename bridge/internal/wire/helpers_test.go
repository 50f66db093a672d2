package wire

import (
	"os"
	"os/exec"
	"runtime/metrics"
	"testing"

	"github.com/sparsepcl/sparsepcl/bridge/internal/server"
)

// heapAllocs is the total of bytes allocated on the heap so far.
func heapAllocs() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// pythonCmd runs `python args...` in the repository root with the server's interpreter (whose
// python_server.wire packs messages as the server does). It skips the test, or fails it when
// CI=true, when there is no such interpreter.
func pythonCmd(t *testing.T, args ...string) *exec.Cmd {
	t.Helper()
	root, err := server.FindRoot()
	if err == nil {
		python := server.FindPython(root)
		probe := exec.Command(python, "-c", "import msgpack, numpy")
		probe.Dir = root
		if out, perr := probe.CombinedOutput(); perr != nil {
			err = &exec.Error{Name: python + ": " + string(out), Err: perr}
		}
	}
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("python for the server's codec unavailable (set SPARSEPCL_PYTHON): %v", err)
		}
		t.Skipf("python for the server's codec unavailable (set SPARSEPCL_PYTHON): %v", err)
	}
	cmd := exec.Command(server.FindPython(root), args...)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "PYTHONPATH="+root)
	return cmd
}
