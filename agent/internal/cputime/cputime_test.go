package cputime

import (
	"runtime"
	"testing"
)

// Busy work raises the process's CPU time (on unix, where it is read).
func TestProcessGrows(t *testing.T) {
	if runtime.GOOS == "windows" || runtime.GOOS == "plan9" {
		t.Skip("CPU time is not read here")
	}
	before := Process()
	x := 0.0
	for i := range 50_000_000 {
		x += float64(i % 7)
	}
	if after := Process(); after <= before {
		t.Fatalf("CPU time %v then %v after busy work (%v)", before, after, x)
	}
}
