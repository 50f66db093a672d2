// Package tfevents writes TensorBoard event files: TFRecord framing (a little-endian length, its
// masked CRC-32C, the data, the data's masked CRC-32C) around tensorflow.Event protocol buffers,
// hand-encoded with protowire. It writes what a training run needs: scalars (simple_value, as
// PyTorch's and Stable-Baselines3's writers do), text for the text plugin, and a SessionLog START
// at the step a (resumed) process begins, which makes TensorBoard drop the steps at and after it
// that an earlier process wrote, so a resumed run's recomputed iterations replace the old ones.
//
// Every process writes its own file (events.out.tfevents.<seconds>.<host>.<pid>.<n>), as
// TensorFlow does; TensorBoard reads all the files of a directory as one run.
package tfevents

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"google.golang.org/protobuf/encoding/protowire"
)

// FilePrefix starts the name of every event file.
const FilePrefix = "events.out.tfevents."

// FileVersion is the file_version of the first event of every file.
const FileVersion = "brain.Event:2"

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// MaskedCRC32C is the CRC-32C of data, masked as TFRecord does (rotated right by 15 bits plus
// 0xa282ead8), so that a CRC of data holding CRCs stays well distributed.
func MaskedCRC32C(data []byte) uint32 {
	c := crc32.Checksum(data, castagnoli)
	return (c>>15 | c<<17) + 0xa282ead8
}

// AppendRecord appends data framed as one TFRecord to b.
func AppendRecord(b, data []byte) []byte {
	var n [8]byte
	binary.LittleEndian.PutUint64(n[:], uint64(len(data)))
	b = append(b, n[:]...)
	b = binary.LittleEndian.AppendUint32(b, MaskedCRC32C(n[:]))
	b = append(b, data...)
	return binary.LittleEndian.AppendUint32(b, MaskedCRC32C(data))
}

// ErrCorrupt marks a record whose length or data fails its CRC, or a truncated record.
var ErrCorrupt = errors.New("tfevents: corrupt record")

// maxRecord caps the length a record header may claim before anything is allocated.
const maxRecord = 1 << 30

// ReadRecords returns the data of every TFRecord in r, checking both CRCs of each.
func ReadRecords(r io.Reader) ([][]byte, error) {
	var out [][]byte
	var head [12]byte
	for {
		if _, err := io.ReadFull(r, head[:]); err != nil {
			if err == io.EOF {
				return out, nil
			}
			return out, fmt.Errorf("%w: record %d: header: %w", ErrCorrupt, len(out), err)
		}
		if MaskedCRC32C(head[:8]) != binary.LittleEndian.Uint32(head[8:]) {
			return out, fmt.Errorf("%w: record %d: length CRC mismatch", ErrCorrupt, len(out))
		}
		n := binary.LittleEndian.Uint64(head[:8])
		if n > maxRecord {
			return out, fmt.Errorf("%w: record %d: length %d", ErrCorrupt, len(out), n)
		}
		data := make([]byte, n+4)
		if _, err := io.ReadFull(r, data); err != nil {
			return out, fmt.Errorf("%w: record %d: %w", ErrCorrupt, len(out), err)
		}
		if MaskedCRC32C(data[:n]) != binary.LittleEndian.Uint32(data[n:]) {
			return out, fmt.Errorf("%w: record %d: data CRC mismatch", ErrCorrupt, len(out))
		}
		out = append(out, data[:n])
	}
}

// Field numbers of tensorflow.Event and the messages inside it (tensorflow/core/util/event.proto,
// framework/summary.proto, framework/tensor.proto).
const (
	eventWallTime    = 1 // double
	eventStep        = 2 // int64
	eventFileVersion = 3 // string
	eventSummary     = 5 // Summary
	eventSessionLog  = 7 // SessionLog

	summaryValue = 1 // repeated Summary.Value

	valueTag         = 1 // string
	valueSimpleValue = 2 // float
	valueTensor      = 8 // TensorProto
	valueMetadata    = 9 // SummaryMetadata

	metadataPluginData = 1 // SummaryMetadata.PluginData
	pluginName         = 1 // string

	tensorDtype     = 1 // DataType
	tensorShape     = 2 // TensorShapeProto (empty: a scalar)
	tensorStringVal = 8 // repeated bytes

	sessionLogStatus = 1 // SessionLog.SessionStatus

	dtString     = 7 // DataType.DT_STRING
	sessionStart = 1 // SessionLog.START
)

// event encodes an Event with wall time wall and step, followed by the bytes of its remaining
// fields (already encoded, in field-number order).
func event(wall time.Time, step int64, rest []byte) []byte {
	var b []byte
	b = protowire.AppendTag(b, eventWallTime, protowire.Fixed64Type)
	b = protowire.AppendFixed64(b, math.Float64bits(float64(wall.Unix())+float64(wall.Nanosecond())/1e9))
	if step != 0 {
		b = protowire.AppendTag(b, eventStep, protowire.VarintType)
		b = protowire.AppendVarint(b, uint64(step))
	}
	return append(b, rest...)
}

// fileVersionEvent is the first event of a file.
func fileVersionEvent(wall time.Time) []byte {
	b := protowire.AppendTag(nil, eventFileVersion, protowire.BytesType)
	return event(wall, 0, protowire.AppendString(b, FileVersion))
}

// sessionStartEvent is a SessionLog START at step.
func sessionStartEvent(wall time.Time, step int64) []byte {
	log := protowire.AppendTag(nil, sessionLogStatus, protowire.VarintType)
	log = protowire.AppendVarint(log, sessionStart)
	b := protowire.AppendTag(nil, eventSessionLog, protowire.BytesType)
	return event(wall, step, protowire.AppendBytes(b, log))
}

// summaryEvent wraps encoded Summary.Values into an Event's summary.
func summaryEvent(wall time.Time, step int64, values [][]byte) []byte {
	var sum []byte
	for _, v := range values {
		sum = protowire.AppendTag(sum, summaryValue, protowire.BytesType)
		sum = protowire.AppendBytes(sum, v)
	}
	b := protowire.AppendTag(nil, eventSummary, protowire.BytesType)
	return event(wall, step, protowire.AppendBytes(b, sum))
}

// scalarValue is a Summary.Value with a simple_value.
func scalarValue(tag string, x float32) []byte {
	b := protowire.AppendTag(nil, valueTag, protowire.BytesType)
	b = protowire.AppendString(b, tag)
	b = protowire.AppendTag(b, valueSimpleValue, protowire.Fixed32Type)
	return protowire.AppendFixed32(b, math.Float32bits(x))
}

// textValue is a Summary.Value for the text plugin: a scalar DT_STRING tensor.
func textValue(tag, text string) []byte {
	var tensor []byte
	tensor = protowire.AppendTag(tensor, tensorDtype, protowire.VarintType)
	tensor = protowire.AppendVarint(tensor, dtString)
	tensor = protowire.AppendTag(tensor, tensorShape, protowire.BytesType)
	tensor = protowire.AppendBytes(tensor, nil)
	tensor = protowire.AppendTag(tensor, tensorStringVal, protowire.BytesType)
	tensor = protowire.AppendString(tensor, text)
	plugin := protowire.AppendTag(nil, pluginName, protowire.BytesType)
	plugin = protowire.AppendString(plugin, "text")
	meta := protowire.AppendTag(nil, metadataPluginData, protowire.BytesType)
	meta = protowire.AppendBytes(meta, plugin)

	b := protowire.AppendTag(nil, valueTag, protowire.BytesType)
	b = protowire.AppendString(b, tag)
	b = protowire.AppendTag(b, valueTensor, protowire.BytesType)
	b = protowire.AppendBytes(b, tensor)
	b = protowire.AppendTag(b, valueMetadata, protowire.BytesType)
	return protowire.AppendBytes(b, meta)
}

// Writer appends events to one new event file. Each event is written with one write call, unbuffered,
// so a crash loses no event that was written before it, and tears at most the last one (which
// TensorBoard's reader skips).
type Writer struct {
	f    *os.File
	now  func() time.Time
	buf  []byte
	path string
}

// Options tune Create; the zero value is the standard behaviour.
type Options struct {
	Now func() time.Time // the events' wall time (nil: time.Now)
}

// Create makes dir (when missing) and a new event file in it, named after the time, the host and
// the process, and writes the file_version event. TensorBoard reads a directory's event files in
// name order, so the new name always sorts after the files already there: a resumed run started in
// the same second as the file before it (a pid that sorts lower, or a clock set back) names its
// file one second after that file's, or its recomputed rows would be read first and purged as stale.
func Create(dir string, opts Options) (*Writer, error) {
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("tfevents: %w", err)
	}
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "localhost"
	}
	t := now()
	last, err := lastFileName(dir)
	if err != nil {
		return nil, err
	}
	var f *os.File
	for n, sec := 0, t.Unix(); ; n++ {
		name := fmt.Sprintf("%s%d.%s.%d.%d", FilePrefix, sec, host, os.Getpid(), n)
		if name <= last {
			sec = fileSeconds(last) + 1
			name = fmt.Sprintf("%s%d.%s.%d.%d", FilePrefix, sec, host, os.Getpid(), n)
		}
		f, err = os.OpenFile(filepath.Join(dir, name), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err == nil {
			break
		}
		if !errors.Is(err, os.ErrExist) || n >= 1000 {
			return nil, fmt.Errorf("tfevents: %w", err)
		}
	}
	w := &Writer{f: f, now: now, path: f.Name()}
	if err := w.write(fileVersionEvent(t)); err != nil {
		f.Close()
		return nil, err
	}
	return w, nil
}

// lastFileName is the name of dir's event file that sorts last ("" when it has none).
func lastFileName(dir string) (string, error) {
	entries, err := os.ReadDir(dir) // not a glob: a run directory's name may hold '[' or '*'
	if err != nil {
		return "", fmt.Errorf("tfevents: %w", err)
	}
	last := ""
	for _, e := range entries {
		if name := e.Name(); strings.HasPrefix(name, FilePrefix) {
			last = max(last, name)
		}
	}
	return last, nil
}

// fileSeconds is the Unix time in an event file's name (0 when it has none).
func fileSeconds(name string) int64 {
	rest := strings.TrimPrefix(name, FilePrefix)
	sec, _ := strconv.ParseInt(rest[:strings.IndexByte(rest+".", '.')], 10, 64)
	return sec
}

// Path is the event file's path.
func (w *Writer) Path() string { return w.path }

func (w *Writer) write(ev []byte) error {
	w.buf = AppendRecord(w.buf[:0], ev)
	if _, err := w.f.Write(w.buf); err != nil {
		return fmt.Errorf("tfevents: %w", err)
	}
	return nil
}

// SessionStart writes a SessionLog START at step: TensorBoard then discards the events at step and
// after it from the files written before this one (the rows a resumed run recomputes).
func (w *Writer) SessionStart(step int64) error {
	return w.write(sessionStartEvent(w.now(), step))
}

// Scalars writes one event at step holding a scalar per tag (as float32, TensorBoard's
// simple_value). tags and values must have the same length.
func (w *Writer) Scalars(step int64, tags []string, values []float64) error {
	if len(tags) != len(values) {
		return fmt.Errorf("tfevents: %d tags for %d values", len(tags), len(values))
	}
	vals := make([][]byte, len(tags))
	for i, tag := range tags {
		vals[i] = scalarValue(tag, float32(values[i]))
	}
	return w.write(summaryEvent(w.now(), step, vals))
}

// Text writes text (Markdown) under tag at step, for TensorBoard's text plugin.
func (w *Writer) Text(step int64, tag, text string) error {
	return w.write(summaryEvent(w.now(), step, [][]byte{textValue(tag, text)}))
}

// Close closes the file.
func (w *Writer) Close() error {
	if err := w.f.Close(); err != nil {
		return fmt.Errorf("tfevents: %w", err)
	}
	return nil
}
