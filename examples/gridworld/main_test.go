package main

import (
	"context"
	"testing"
)

// The example checks its env and trains it to a solved verdict.
func TestGridWorldSolves(t *testing.T) {
	if err := run(context.Background()); err != nil {
		t.Fatal(err)
	}
}
