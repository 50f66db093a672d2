package tfevents

import (
	"bytes"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The vectors below were produced by TensorBoard's own Python code (tensorboard 2.21:
// pywrap_tensorflow.masked_crc32c, RecordWriter and the event_pb2 protos' SerializeToString).

func TestMaskedCRC32C(t *testing.T) {
	for _, tc := range []struct {
		data string
		want uint32
	}{
		{"", 0xa282ead8},
		{"a", 0x28e46e78},
		{"123456789", 0xc78ab0e5},
		{strings.Repeat("\x00", 32), 0x0fd7fffa},
	} {
		if got := MaskedCRC32C([]byte(tc.data)); got != tc.want {
			t.Errorf("MaskedCRC32C(%q) = %#x, want %#x", tc.data, got, tc.want)
		}
	}
}

func unhex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestEventsMatchTensorBoard(t *testing.T) {
	wall := time.Unix(1700000000, 500_000_000)
	for _, tc := range []struct {
		name string
		got  []byte
		want string
	}{
		{"file version", fileVersionEvent(wall), "0900002040fc54d9411a0d627261696e2e4576656e743a32"},
		{"session start", sessionStartEvent(wall, 12), "0900002040fc54d941100c3a020801"},
		{"text", summaryEvent(wall, 3, [][]byte{textValue("config", "hé")}),
			"0900002040fc54d94110032a1f0a1d0a06636f6e666967420908071200420368c3a94a080a060a0474657874"},
	} {
		if want := unhex(t, tc.want); !bytes.Equal(tc.got, want) {
			t.Errorf("%s: %x, want %x", tc.name, tc.got, want)
		}
	}
}

func TestScalarRecordMatchesTensorBoard(t *testing.T) {
	ev := summaryEvent(time.Unix(1700000000, 250_000_000), 7, [][]byte{scalarValue("loss", 0.5), scalarValue("mean_reward", -3.25)})
	want := unhex(t, "2e00000000000000c5cb57fa0900001040fc54d94110072a210a0b0a046c6f7373150000003f0a120a0b6d65616e5f72657761726415000050c0f948062f")
	if got := AppendRecord(nil, ev); !bytes.Equal(got, want) {
		t.Errorf("record %x, want %x", got, want)
	}
}

func TestWriterRoundTrip(t *testing.T) {
	dir := t.TempDir()
	wall := time.Unix(1700000000, 500_000_000)
	w, err := Create(filepath.Join(dir, "run"), Options{Now: func() time.Time { return wall }})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(filepath.Base(w.Path()), FilePrefix+"1700000000.") {
		t.Errorf("file name %s", filepath.Base(w.Path()))
	}
	steps := []error{w.SessionStart(12), w.Scalars(7, []string{"loss"}, []float64{0.5}), w.Text(3, "config", "hé"), w.Close()}
	for i, err := range steps {
		if err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
	}
	if err := w.Scalars(1, []string{"a", "b"}, []float64{1}); err == nil {
		t.Error("Scalars with 2 tags and 1 value: no error")
	}
	data, err := os.ReadFile(w.Path())
	if err != nil {
		t.Fatal(err)
	}
	recs, err := ReadRecords(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	want := [][]byte{fileVersionEvent(wall), sessionStartEvent(wall, 12), summaryEvent(wall, 7, [][]byte{scalarValue("loss", 0.5)}),
		summaryEvent(wall, 3, [][]byte{textValue("config", "hé")})}
	if len(recs) != len(want) {
		t.Fatalf("%d records, want %d", len(recs), len(want))
	}
	for i := range want {
		if !bytes.Equal(recs[i], want[i]) {
			t.Errorf("record %d: %x, want %x", i, recs[i], want[i])
		}
	}

	// A second writer in the same second and process gets a file of its own.
	w2, err := Create(filepath.Join(dir, "run"), Options{Now: func() time.Time { return wall }})
	if err != nil {
		t.Fatal(err)
	}
	defer w2.Close()
	if w2.Path() == w.Path() {
		t.Errorf("second writer reuses %s", w.Path())
	}
}

func TestReadRecordsCorrupt(t *testing.T) {
	good := AppendRecord(AppendRecord(nil, []byte("first")), []byte("second"))
	flip := func(i int) []byte {
		b := bytes.Clone(good)
		b[i] ^= 1
		return b
	}
	for _, tc := range []struct {
		name string
		data []byte
		n    int // records read before the error
	}{
		{"length", flip(0), 0},
		{"length crc", flip(9), 0},
		{"data", flip(13), 0},
		{"second data", flip(len(good) - 6), 1},
		{"torn", good[:len(good)-2], 1},
		{"torn header", good[:len(good)-len("second")-10], 1},
	} {
		recs, err := ReadRecords(bytes.NewReader(tc.data))
		if !errors.Is(err, ErrCorrupt) || len(recs) != tc.n {
			t.Errorf("%s: %d records, err %v; want %d and ErrCorrupt", tc.name, len(recs), err, tc.n)
		}
	}
	recs, err := ReadRecords(bytes.NewReader(good))
	if err != nil || len(recs) != 2 || string(recs[1]) != "second" {
		t.Errorf("good: %q, %v", recs, err)
	}
}

// TensorBoard reads a directory's event files in name order: a new file must sort after the
// files already there, whatever their names, or a resumed run's rows would be read first.
func TestCreateSortsAfterExistingFiles(t *testing.T) {
	wall := time.Unix(1700000000, 0)
	for _, tc := range []struct {
		name     string
		existing string // an event file already in the directory ("" for none)
		wantSec  string // the new file name's seconds
	}{
		{"empty directory", "", "1700000000"},
		{"older file", FilePrefix + "1699999999.zz.99999.0", "1700000000"},
		{"same second, sorts later", FilePrefix + "1700000000.zzzz.99999.0", "1700000001"},
		{"clock set back", FilePrefix + "1800000000.a.1.0", "1800000001"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "run [1]*") // glob metacharacters in the name
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if tc.existing != "" {
				if err := os.WriteFile(filepath.Join(dir, tc.existing), nil, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			w, err := Create(dir, Options{Now: func() time.Time { return wall }})
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close()
			name := filepath.Base(w.Path())
			if !strings.HasPrefix(name, FilePrefix+tc.wantSec+".") {
				t.Errorf("new file %s, want seconds %s", name, tc.wantSec)
			}
			if name <= tc.existing {
				t.Errorf("new file %s sorts before %s", name, tc.existing)
			}
		})
	}
}
