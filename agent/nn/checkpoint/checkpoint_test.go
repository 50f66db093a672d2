package checkpoint

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sparsepcl/sparsepcl/agent/model/lstm"
	"github.com/sparsepcl/sparsepcl/agent/nn"
	"github.com/sparsepcl/sparsepcl/agent/nn/optim"
	"github.com/sparsepcl/sparsepcl/agent/tensor"
)

func testParams() []*nn.Param {
	a, b := nn.NewParam("lstm.Wx", 3, 4), nn.NewParam("head0.b", 1, 2)
	for i := range a.Value.Data {
		a.Value.Data[i] = float32(i) * 0.25
	}
	b.Value.Data[0], b.Value.Data[1] = -1.5, 7
	return []*nn.Param{a, b}
}

func TestRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ckpt.bin")
	ps := testParams()
	if err := Save(path, ps, []byte(`{"iter":12}`)); err != nil {
		t.Fatal(err)
	}
	fresh := []*nn.Param{nn.NewParam("head0.b", 1, 2), nn.NewParam("lstm.Wx", 3, 4)} // order need not match
	meta, err := Restore(path, fresh)
	if err != nil {
		t.Fatal(err)
	}
	if string(meta) != `{"iter":12}` {
		t.Fatalf("meta %q", meta)
	}
	for _, p := range fresh {
		src := ps[0]
		if p.Name == "head0.b" {
			src = ps[1]
		}
		for i := range p.Value.Data {
			if p.Value.Data[i] != src.Value.Data[i] {
				t.Fatalf("%s[%d] = %v, want %v", p.Name, i, p.Value.Data[i], src.Value.Data[i])
			}
		}
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Fatalf("temporary files left behind: %v", entries)
	}
}

func TestBadFiles(t *testing.T) {
	good, err := Encode(testParams(), []byte("m"))
	if err != nil {
		t.Fatal(err)
	}
	mutate := func(f func(b []byte) []byte) []byte { return f(append([]byte(nil), good...)) }
	cases := []struct {
		name    string
		data    []byte
		wantSub string
	}{
		{"empty", nil, "magic"},
		{"wrong magic", mutate(func(b []byte) []byte { b[0] = 'X'; return b }), "magic"},
		{"wrong version", mutate(func(b []byte) []byte { binary.LittleEndian.PutUint32(b[8:], 2); return b }), "version 2"},
		{"flipped data byte", mutate(func(b []byte) []byte { b[len(b)-10] ^= 1; return b }), "checksum"},
		{"truncated", good[:len(good)-7], "checksum"},
		// rows = cols = 2^31: rows*cols*4 wraps to 0 in uint64, so a size check on the byte
		// count would pass and the decoder would try to allocate 2^62 floats.
		{"wrapping shape", mutate(func(b []byte) []byte {
			off := len(Magic) + 4 + 4 + len("m") + 4 + 2 + len("lstm.Wx")
			binary.LittleEndian.PutUint32(b[off:], 1<<31)
			binary.LittleEndian.PutUint32(b[off+4:], 1<<31)
			body := b[:len(b)-4]
			binary.LittleEndian.PutUint32(b[len(b)-4:], crc32.Checksum(body, castagnoli))
			return b
		}), "claims 2147483648x2147483648"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "c.bin")
			if err := os.WriteFile(path, tc.data, 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := Restore(path, testParams())
			if err == nil || !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), tc.wantSub) || !strings.Contains(err.Error(), path) {
				t.Fatalf("got %v, want ErrFormat mentioning %q and the path", err, tc.wantSub)
			}
		})
	}
}

func TestMismatchedParams(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.bin")
	if err := Save(path, testParams(), nil); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name    string
		params  []*nn.Param
		wantSub []string
	}{
		{"shape", []*nn.Param{nn.NewParam("lstm.Wx", 4, 3), nn.NewParam("head0.b", 1, 2)}, []string{"lstm.Wx", "3x4", "4x3"}},
		{"missing", append(testParams(), nn.NewParam("head1.W", 2, 2)), []string{"head1.W", "missing"}},
		{"extra in file", testParams()[:1], []string{"head0.b", "not in the model"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := tc.params[0].Value.Clone()
			_, err := Restore(path, tc.params)
			if err == nil {
				t.Fatal("accepted")
			}
			for _, s := range tc.wantSub {
				if !strings.Contains(err.Error(), s) {
					t.Fatalf("error %q lacks %q", err, s)
				}
			}
			if tensor.SameShape("", before, tc.params[0].Value) == nil && before.Data[1] != tc.params[0].Value.Data[1] {
				t.Fatal("a failed restore modified parameters")
			}
		})
	}
}

// TestResumeIsExact: training k steps, saving net+Adam, and continuing is
// bit-identical to restoring into a fresh net+Adam and continuing.
func TestResumeIsExact(t *testing.T) {
	eng := tensor.GonumEngine()
	cfg := lstm.NetConfig{InputVocabs: []int{3, 3}, Hidden: 8, HeadSizes: []int{3, 1}, StateHeads: []bool{false, true}, Seed: 5, Engine: eng}
	const T, B = 4, 3
	tokens := make([]int32, T*B*2)
	for i := range tokens {
		tokens[i] = int32(i % 3)
	}
	lengths := []int{4, 2, 3}
	trainStep := func(n *lstm.Net, a *optim.Adam) {
		t.Helper()
		nn.ZeroGrads(n.Params())
		outs, err := n.Forward(tokens, T, B, lengths)
		if err != nil {
			t.Fatal(err)
		}
		// Loss Σ out²/2: dL/dout = out.
		ds := []*tensor.Matrix{outs[0].Clone(), outs[1].Clone()}
		if err := n.Backward(ds); err != nil {
			t.Fatal(err)
		}
		optim.ClipGlobalNorm(n.Params(), 1)
		if err := a.Step(); err != nil {
			t.Fatal(err)
		}
	}
	build := func() (*lstm.Net, *optim.Adam) {
		n, err := lstm.NewNet(cfg)
		if err != nil {
			t.Fatal(err)
		}
		a, err := optim.NewAdam(n.Params(), optim.DefaultAdamConfig(0.05))
		if err != nil {
			t.Fatal(err)
		}
		return n, a
	}
	n1, a1 := build()
	for i := 0; i < 3; i++ {
		trainStep(n1, a1)
	}
	path := filepath.Join(t.TempDir(), "resume.ckpt")
	if err := Save(path, append(n1.Params(), a1.StateParams()...), []byte("iter=3")); err != nil {
		t.Fatal(err)
	}
	cfg.Seed = 99 // a different init, fully overwritten by the restore
	n2, a2 := build()
	if _, err := Restore(path, append(n2.Params(), a2.StateParams()...)); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		trainStep(n1, a1)
		trainStep(n2, a2)
	}
	p1, p2 := n1.Params(), n2.Params()
	for i := range p1 {
		for k := range p1[i].Value.Data {
			if p1[i].Value.Data[k] != p2[i].Value.Data[k] {
				t.Fatalf("%s[%d] differs after resume: %v vs %v", p1[i].Name, k, p1[i].Value.Data[k], p2[i].Value.Data[k])
			}
		}
	}
}

// Save replaces the file atomically (agent/atomicfile): no temporary file is left, the
// file is world-readable, and a save into a missing directory names the path.
func TestSaveLeavesOnlyTheFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "ckpt.bin")
	for range 2 {
		if err := Save(path, testParams(), nil); err != nil {
			t.Fatal(err)
		}
	}
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(es) != 1 || es[0].Name() != "ckpt.bin" {
		t.Fatalf("directory holds %v, want only ckpt.bin", es)
	}
	if st, err := os.Stat(path); err != nil || st.Mode().Perm() != 0o644 {
		t.Fatalf("stat: %v, %v; want mode 0644", st, err)
	}
	missing := filepath.Join(dir, "gone", "ckpt.bin")
	if err := Save(missing, testParams(), nil); err == nil || !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), "checkpoint: save: ") || !strings.Contains(err.Error(), missing) {
		t.Fatalf("error %v, want a checkpoint save error naming %s", err, missing)
	}
}

// Load's errors read "checkpoint <path>: <problem>": the path once and no "checkpoint:" package
// prefix (the caller adds only its own context), with the cause still visible to errors.Is.
func TestLoadErrorNamesThePathOnce(t *testing.T) {
	dir := t.TempDir()
	good, err := Encode(testParams(), []byte("m"))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		data []byte // nil: no file
		is   error
		want string
	}{
		{"missing", nil, os.ErrNotExist, "no such file"},
		{"truncated", good[:len(good)/2], ErrFormat, "bad format: checksum mismatch"},
		{"garbage", []byte("garbage"), ErrFormat, "bad format: not a checkpoint"},
	}
	for _, tc := range cases {
		path := filepath.Join(dir, tc.name+".bin")
		if tc.data != nil {
			if err := os.WriteFile(path, tc.data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		_, err := Load(path)
		if err == nil || !errors.Is(err, tc.is) {
			t.Errorf("%s: error %v, want one wrapping %v", tc.name, err, tc.is)
			continue
		}
		msg := err.Error()
		if !strings.HasPrefix(msg, "checkpoint "+path+": ") || strings.Count(msg, path) != 1 || strings.Contains(msg, "checkpoint:") || !strings.Contains(msg, tc.want) {
			t.Errorf("%s: error %q, want \"checkpoint %s: ...%s...\" naming the path once, with no \"checkpoint:\" prefix", tc.name, msg, path, tc.want)
		}
	}
}
