//go:build cgo

package tensor

import (
	"os"
	"testing"
)

// Loading OpenBLAS sets its idle threads' spin to the smallest (threadTimeoutEnv) unless the
// environment already says: a value the user set is kept.
func TestOpenBLASThreadTimeout(t *testing.T) {
	t.Setenv(threadTimeoutEnv, "10")
	openBLASForTest(t)
	if got := os.Getenv(threadTimeoutEnv); got != "10" {
		t.Errorf("%s = %q after loading, want the user's 10", threadTimeoutEnv, got)
	}
	t.Setenv(threadTimeoutEnv, "") // restored after the test
	if err := os.Unsetenv(threadTimeoutEnv); err != nil {
		t.Fatal(err)
	}
	openBLASForTest(t)
	if got := os.Getenv(threadTimeoutEnv); got != threadTimeout {
		t.Errorf("%s = %q after loading, want %s", threadTimeoutEnv, got, threadTimeout)
	}
}
