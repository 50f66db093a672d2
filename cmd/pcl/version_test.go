package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"testing"

	"github.com/sparsepcl/sparsepcl/agent/provenance"
)

// pcl version names the binary by its provenance line and the SHA-256 of the executable (here the
// test binary's, hashed apart), as text and as a run.json session.
func TestVersion(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	sum := fmt.Sprintf("%x", sha256.Sum256(data))
	var o, e bytes.Buffer
	if code := runMain(context.Background(), []string{"version"}, &o, &e); code != 0 {
		t.Fatalf("version: exit %d: %s", code, e.String())
	}
	text := regexp.MustCompile(`^pcl: (commit unknown|binary \S+ \(.*\)|binary unstamped.*), go\S+ \S+/\S+, BLAS .+, host .+ \(\d+ cores\)\nsha256 ([0-9a-f]{64})\n$`)
	m := text.FindStringSubmatch(o.String())
	if m == nil || m[2] != sum {
		t.Errorf("version output:\n%s\nwant the provenance line and sha256 %s", o.String(), sum)
	}
	o.Reset()
	if code := runMain(context.Background(), []string{"version", "--json"}, &o, &e); code != 0 {
		t.Fatalf("version --json: exit %d: %s", code, e.String())
	}
	var s provenance.Session
	if err := json.Unmarshal(o.Bytes(), &s); err != nil {
		t.Fatalf("version --json: %v\n%s", err, o.String())
	}
	if s.BinarySHA256 != sum || s.GoVersion == "" || s.BLAS == "" || s.Cores < 1 || s.Command != nil {
		t.Errorf("version --json: %+v", s)
	}
	if code := runMain(context.Background(), []string{"version", "extra"}, &o, &e); code != exitUsage {
		t.Errorf("version with an argument: exit %d, want %d", code, exitUsage)
	}
}
