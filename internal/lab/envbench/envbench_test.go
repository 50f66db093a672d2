package envbench

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/sparsepcl/sparsepcl/bridge"
)

// TestEnvBenchSmoke runs the benchmark at a tiny size against the real server and checks every section
// of the table is there.
func TestEnvBenchSmoke(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	if s, err := bridge.StartServer(ctx, bridge.ServerOptions{}); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("python server unavailable: %v", err)
		}
		t.Skipf("python server unavailable (set SPARSEPCL_PYTHON): %v", err)
	} else {
		s.Close()
	}
	root, err := bridge.FindRoot()
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	o := Options{Env: "Copy-v0", N: 4, Steps: 20, Rounds: 2, Python: bridge.FindPython(root), Root: root}
	if err := Run(ctx, o, &out); err != nil {
		t.Fatalf("envbench: %v", err)
	}
	for _, want := range []string{"SyncVectorEnv (anchor)", "bare env.step loop", "2 processes at once", "2 servers, pipelined", "ping round trip (floor)", "N=16, pipelined", "Go-native", "Python via bridge", "load average"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}

func TestQuantile(t *testing.T) {
	tests := []struct {
		xs   []float64
		q    float64
		want float64
	}{
		{[]float64{3, 1, 2}, 0.5, 2},
		{[]float64{4, 1, 3, 2}, 0.5, 2.5},
		{[]float64{4, 1, 3, 2}, 0.25, 1.75},
		{[]float64{4, 1, 3, 2}, 1, 4},
		{[]float64{4, 1, 3, 2}, 0, 1},
		{[]float64{7}, 0.75, 7},
	}
	for _, tt := range tests {
		if got := quantile(tt.xs, tt.q); got != tt.want {
			t.Errorf("quantile(%v, %v) = %v, want %v", tt.xs, tt.q, got, tt.want)
		}
	}
	if got := spread([]float64{4, 1, 3, 2}, "%.2f"); got != "1.75-3.25" {
		t.Errorf("spread = %q", got)
	}
}

// TestEnvBenchAuthSmoke runs the PLAIN-against-NULL measurement at a tiny size against real servers
// on tcp loopback and checks both rows are there.
func TestEnvBenchAuthSmoke(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	if s, err := bridge.StartServer(ctx, bridge.ServerOptions{}); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("python server unavailable: %v", err)
		}
		t.Skipf("python server unavailable (set SPARSEPCL_PYTHON): %v", err)
	} else {
		s.Close()
	}
	root, err := bridge.FindRoot()
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	o := Options{Env: "Copy-v0", N: 4, Steps: 10, Rounds: 1, Python: bridge.FindPython(root), Root: root}
	if err := RunAuth(ctx, o, &out); err != nil {
		t.Fatalf("envbench --auth: %v", err)
	}
	for _, want := range []string{"PLAIN", "NULL, a second server (control)", "vs NULL", "interleaved batch by batch", "tcp loopback"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}
