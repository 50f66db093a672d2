package main

import (
	"context"
	"io"
	"math"
	"os"
	"testing"
	"time"
)

// A few iterations through a real server: every return is finite, and the search improves on its
// first population (Pendulum's returns are negative; the elite refit moves the mean up).
func TestCEMOnPendulumThroughTheBridge(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	its, err := run(ctx, io.Discard, "Pendulum-v1", 6, 24, 6, 3)
	if err != nil {
		if os.Getenv("CI") != "true" {
			t.Skipf("python server unavailable (run bash scripts/setup): %v", err)
		}
		t.Fatal(err)
	}
	for i, it := range its {
		if math.IsNaN(it.Mean) || math.IsInf(it.Mean, 0) || it.Best < it.Mean {
			t.Errorf("iteration %d: %+v", i, it)
		}
	}
	if first, last := its[0], its[len(its)-1]; last.Mean <= first.Mean {
		t.Errorf("mean return %.1f after %d iterations, %.1f at the first", last.Mean, len(its), first.Mean)
	}
}
