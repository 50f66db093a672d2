package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/sparsepcl/sparsepcl/internal/envmaker"
)

// The library says there is no Python; the program says which of its commands installs one.
func TestHintNoPython(t *testing.T) {
	err := fmt.Errorf("envmaker: CartPole-v1: %w", envmaker.ErrNoPython)
	if h := hint(err); !strings.Contains(h, "bash scripts/setup") {
		t.Fatalf("hint %q, want one naming bash scripts/setup", h)
	}
	if h := hint(fmt.Errorf("other")); h != "" {
		t.Fatalf("hint %q for an unrelated error", h)
	}
}
