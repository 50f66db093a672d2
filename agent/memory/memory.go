// Package memory estimates the memory a training run will hold and refuses, before anything is
// allocated, a run whose estimate is above the limit.
package memory

// A run's memory is dominated by a few arrays whose sizes follow from the config and the env's
// spaces: the parameters with their gradients and Adam state, the training batch (a row per step of
// every episode, |A| values wide for the policy), and the replay buffer at capacity. Run estimates
// them once the env's spaces are known and before it allocates anything else or writes a file, so
// that a configuration that cannot fit is refused with the numbers, instead of being killed by the
// kernel halfway through or pushing the other runs of a shared machine into swap.

import (
	"bufio"
	"errors"
	"fmt"
	"math"
	"os"
	"runtime"
	"strconv"
	"strings"

	"github.com/sparsepcl/sparsepcl/agent/config"
	"github.com/sparsepcl/sparsepcl/agent/model/lstm"
	"github.com/sparsepcl/sparsepcl/agent/pcl"
	"github.com/sparsepcl/sparsepcl/envs/algorithmic"
)

const (
	// fallbackMemory is the machine's memory assumed when /proc/meminfo cannot be read.
	fallbackMemory = 16 << 30
	// memoryShare is the part of the machine's memory a run may be estimated to need by default:
	// the rest is for the OS, the Go runtime's slack and whatever else runs.
	memoryShare = 0.8
)

// ErrTooLarge marks a run refused because its estimated memory is above the limit (see Error).
var ErrTooLarge = errors.New("the run needs more memory than the limit")

// Part is one term of a memory estimate.
type Part struct {
	What   string // e.g. "the training batch's per-action arrays"
	Detail string // how it is counted, e.g. "400 episodes × 201 steps × 400000 actions × 4 float32 arrays"
	Bytes  int64
	Lower  []string // the config fields that shrink it, by JSON name, e.g. base, batch_size, max_steps
}

// Estimate is what a run is expected to hold at its peak, by part. It counts the large arrays
// only (not the Go runtime's slack), so the process's resident size is somewhat above it.
type Estimate struct {
	Parts []Part
}

// Total is the sum of the parts.
func (e Estimate) Total() int64 {
	var t float64
	for _, p := range e.Parts {
		t += float64(p.Bytes)
	}
	return clampBytes(t)
}

// Largest is the part that dominates.
func (e Estimate) Largest() Part {
	var best Part
	for _, p := range e.Parts {
		if p.Bytes > best.Bytes {
			best = p
		}
	}
	return best
}

// clampBytes converts a byte count computed in float64 (absurd configs overflow int64) to int64.
func clampBytes(b float64) int64 {
	if b >= math.MaxInt64 || math.IsNaN(b) {
		return math.MaxInt64
	}
	return int64(math.Ceil(b))
}

const f32 = 4 // bytes per float32

// checkpointFactor is the bytes per parameter value of the model at rest and while a checkpoint is
// written: the value, its gradient and Adam's two moments (4 float32), and the encoded checkpoint of
// values and moments (3 float32) in a buffer that grows by doubling, so up to twice that.
const checkpointFactor = (4 + 2*3) * f32

// EstimateEpisodes estimates the memory of a whole-episode (LSTM) run of cfg on a task of
// spec. Episodes are counted at their longest, cfg.MaxSteps steps.
func EstimateEpisodes(cfg config.Config, spec lstm.Spec) Estimate {
	e := episodesEstimate{cfg: cfg, H: float64(cfg.Hidden), E: float64(cfg.Hidden), K: float64(spec.NumActions()), F: float64(spec.Features())}
	for _, v := range spec.InputVocabs() {
		e.V += float64(v)
	}
	params := e.params(headLayout(cfg, spec.NumActions()))
	e.sizeFields = []string{"base", "hidden"}
	e.batchFields = []string{"batch_size", "max_steps", "base"}
	if _, err := algorithmic.TaskByID(cfg.Env); err != nil {
		e.sizeFields, e.batchFields = []string{"hidden"}, []string{"batch_size", "max_steps"}
	}
	parts := []Part{paramsPart(params, e.sizeFields)}
	parts = append(parts, e.batch()...)
	parts = append(parts, e.sampling())
	if cfg.Replay {
		T1 := float64(cfg.MaxSteps + 1)
		C := float64(cfg.ReplayCapacity)
		parts = append(parts, Part{
			What:   "the replay buffer at capacity",
			Detail: fmt.Sprintf("%s episodes × %s steps, and its file being encoded", count(C), count(T1)),
			Bytes:  clampBytes(C * (T1*(episodeStepBytes+replayFileStepBytes) + episodeOverhead)),
			Lower:  []string{"replay_capacity", "max_steps"},
		})
	}
	return Estimate{Parts: parts}
}

// episodesEstimate is the LSTM run's sizes the memory estimate reads: hidden units H, embedding
// width E, actions K, summed input vocabularies V, token features F.
type episodesEstimate struct {
	cfg                     config.Config
	H, E, K, V, F           float64
	otherCols               float64  // head columns besides the |A| logits (params sets it)
	sizeFields, batchFields []string // the fields that lower the network's and the batch's size
}

// params counts the network's parameters: the embeddings and their bias, the LSTM, the heads.
func (e *episodesEstimate) params(heads pcl.Heads) float64 {
	H, E := e.H, e.E
	params := e.V*E + E + (E+H+1)*4*H
	for i, s := range heads.Sizes {
		in := H
		if i == heads.VHead {
			in = 2 * H // V reads [c, h]
		}
		params += (in + 1) * float64(s)
		if i > 0 {
			e.otherCols += float64(s)
		}
	}
	return params
}

// rows is the training batch's rows: the larger of the fresh and the replayed batch, every
// episode padded to the longest (MaxSteps steps and the final state).
func (e *episodesEstimate) rows() (B, T1 float64) {
	B = float64(e.cfg.BatchSize)
	if e.cfg.Replay {
		B = max(B, float64(e.cfg.EffectiveReplayBatch()))
	}
	return B, float64(e.cfg.MaxSteps + 1)
}

// projected says the LSTM's input goes through projected embedding tables (packed training).
func (e *episodesEstimate) projected() bool {
	B, T1 := e.rows()
	return 2*(e.V+1) <= B*T1 && 4*(e.F+1) <= e.E
}

// batch is the training batch's parts: its per-action arrays, the LSTM's activations and the
// projected embedding tables.
func (e *episodesEstimate) batch() []Part {
	H, E, K, V := e.H, e.E, e.K, e.V
	B, T1 := e.rows()
	rows := B * T1
	// |A|-wide arrays per row: the head output, the objective's logits and policy, the head
	// gradient; packed (projected) training adds the packed output and gradient.
	projected := e.projected()
	kArrays := 4.0
	if projected {
		kArrays = 6
	}
	parts := []Part{{
		What:   "the training batch's per-action arrays",
		Detail: fmt.Sprintf("%s episodes × %s steps × %s actions × %g float32 arrays", count(B), count(T1), count(K), kArrays),
		Bytes:  clampBytes(rows * K * kArrays * f32),
		Lower:  e.batchFields,
	}}
	// Per row besides: the LSTM's gates and their gradient (4H each), h, c, tanh c, dh, dc (H
	// each), on the direct input path the embedding sums and their gradient (E each), the other
	// heads and their gradients, the tokens.
	perRow := 13*H + e.otherCols*kArrays + 2*e.F
	if !projected {
		perRow += 2 * E
	}
	parts = append(parts, Part{
		What:   "the training batch's LSTM activations",
		Detail: fmt.Sprintf("%s rows × %s values", count(rows), count(perRow)),
		Bytes:  clampBytes(rows * perRow * f32),
		Lower:  []string{"batch_size", "max_steps", "hidden"},
	})
	// Projected tables of the embeddings through the LSTM input kernel ((V+1) x (E+4H)): for
	// training (with its gradient and one partial gradient per worker), and for sampling steps.
	tables := 0.0
	table := (V + 1) * (E + 4*H)
	if projected {
		tables += 2*table + float64(runtime.GOMAXPROCS(0))*(V+1)*4*H
	}
	if 2*(V+1) <= float64(e.cfg.BatchSize) {
		tables += table
	}
	if tables > 0 {
		parts = append(parts, Part{
			What:   "the projected embedding tables",
			Detail: fmt.Sprintf("%s vocabulary rows × %s values", count(V+1), count(E+4*H)),
			Bytes:  clampBytes(tables * f32),
			Lower:  e.sizeFields,
		})
	}
	return parts
}

// sampling is the heads of every copy (fresh batch and evaluation), the LSTM state, the episodes.
func (e *episodesEstimate) sampling() Part {
	cfg := e.cfg
	cols := e.K + e.otherCols
	n := float64(cfg.BatchSize)
	if cfg.EvalEvery > 0 {
		n += float64(cfg.EvalEpisodes)
	}
	_, T1 := e.rows()
	return Part{
		What:   "sampling",
		Detail: fmt.Sprintf("%s copies × %s head values, and the fresh episodes", count(n), count(cols)),
		Bytes:  clampBytes(n*(cols+6*e.H)*f32 + float64(cfg.BatchSize)*T1*episodeStepBytes),
		Lower:  e.batchFields,
	}
}

const (
	// episodeStepBytes is a stored episode's step: observation and action (int32 each) and reward
	// (float64), with the slack of slices grown by append (up to 2x, about 1.5x on average).
	episodeStepBytes = 16 * 1.5
	// replayFileStepBytes is a step in the encoded replay file.
	replayFileStepBytes = 16
	// episodeOverhead is an episode's struct, slice headers, pointer and priority.
	episodeOverhead = 160
)

// EstimateSteps estimates the memory of a long-episode (mlp) run of cfg on an env with
// observation vectors of obsDim values and numActions actions.
func EstimateSteps(cfg config.Config, obsDim, numActions int) Estimate {
	D, H, K := float64(obsDim), float64(cfg.MLPHidden), float64(numActions)
	heads := headLayout(cfg, numActions)
	params := (D+1)*H + (H+1)*H // policy trunk
	otherCols := 0.0
	for i, s := range heads.Sizes {
		if i == heads.VHead {
			params += (D+1)*H + (H+1)*H + H + 1 // the value network
		} else {
			params += (H + 1) * float64(s)
		}
		if i > 0 {
			otherCols += float64(s)
		}
	}
	sizeFields := []string{"mlp_hidden"}
	if cfg.Grid > 0 {
		sizeFields = []string{"grid", "mlp_hidden"}
	}
	parts := []Part{paramsPart(params, sizeFields)}
	// The training batch: sub-episodes (or the fresh pieces of every copy) of up to StepsPerIter
	// steps and their last state.
	B := float64(cfg.SubEpisodes)
	if cfg.OnPolicyStep {
		B = max(B, float64(cfg.NumEnvs))
	}
	T1 := float64(cfg.StepsPerIter + 1)
	rows := B * T1
	batchFields := []string{"sub_episodes", "steps_per_iter"}
	if cfg.Grid > 0 {
		batchFields = []string{"grid", "sub_episodes", "steps_per_iter"}
	}
	// |A|-wide per row: the logits layer's output, the objective's logits and policy, the head
	// gradient; sparse PCL passes the head gradient as sparse rows
	// (Heads.TakesSparseGrad) and holds no dense one.
	kArrays := 4.0
	if heads.TakesSparseGrad() {
		kArrays = 3
	}
	parts = append(parts, Part{
		What:   "the training batch's per-action arrays",
		Detail: fmt.Sprintf("%s sub-episodes × %s steps × %s actions × %g float32 arrays", count(B), count(T1), count(K), kArrays),
		Bytes:  clampBytes(rows * K * kArrays * f32),
		Lower:  batchFields,
	})
	// Per row besides: the input and its gradient, the two networks' layers, their activations
	// and gradients, the other heads.
	perRow := 2*D + 12*H + otherCols*kArrays
	parts = append(parts, Part{
		What:   "the training batch's hidden layers",
		Detail: fmt.Sprintf("%s rows × %s values", count(rows), count(perRow)),
		Bytes:  clampBytes(rows * perRow * f32),
		Lower:  []string{"sub_episodes", "steps_per_iter", "mlp_hidden"},
	})
	// Sampling: every copy's action scores and policy; the collected pieces.
	n := float64(cfg.NumEnvs + cfg.EvalEpisodes)
	parts = append(parts, Part{
		What:   "sampling",
		Detail: fmt.Sprintf("%s copies × %s actions, and the collected steps", count(n), count(K)),
		Bytes:  clampBytes(n*(K*3+D+4*H)*f32 + float64(cfg.NumEnvs)*T1*(D*f32+12)),
		Lower:  []string{"num_envs"},
	})
	// The step replay at capacity; its file is streamed, not encoded in memory.
	S := float64(cfg.ReplaySteps)
	parts = append(parts, Part{
		What:   "the replay buffer at capacity",
		Detail: fmt.Sprintf("%s steps × %d bytes (%s observation values)", count(S), ReplayBytesPerStep(int(D)), count(D)),
		Bytes:  clampBytes(S * float64(ReplayBytesPerStep(int(D)))),
		Lower:  []string{"replay_steps"},
	})
	return Estimate{Parts: parts}
}

// ReplayBytesPerStep is what the long-episode replay holds per stored env step of observations of
// dim values: the observation (float32), the action (int32), the reward and the return to go
// (float64), and 8 bytes of slack (the capacity the appends leave, a sub-episode's headers).
func ReplayBytesPerStep(dim int) int { return 4*dim + 4 + 8 + 8 + 8 }

// count prints a whole number of things without exponent or fraction.
func count(x float64) string { return strconv.FormatFloat(math.Round(x), 'f', -1, 64) }

// Limit is the most memory a run may be estimated to need.
type Limit struct {
	Bytes int64  // < 0: no limit; 0 (the zero value): DefaultLimit()
	From  string // where the number comes from, for messages: "80% of this machine's 23.5 GiB"
}

// Off reports whether the limit is disabled.
func (l Limit) Off() bool { return l.Bytes < 0 }

// NoLimit disables the check.
func NoLimit() Limit { return Limit{Bytes: -1, From: "off"} }

// DefaultLimit is 80% of the machine's physical memory (MemTotal of /proc/meminfo), or of
// 16 GiB when that cannot be read.
func DefaultLimit() Limit { return limitFrom("/proc/meminfo") }

func limitFrom(meminfo string) Limit {
	total, err := memTotal(meminfo)
	if err != nil {
		return Limit{Bytes: int64(fallbackMemory) * 8 / 10,
			From: fmt.Sprintf("80%% of an assumed %s: this machine's memory is unknown (%v)", FormatBytes(fallbackMemory), err)}
	}
	return Limit{Bytes: int64(memoryShare * float64(total)), From: fmt.Sprintf("80%% of this machine's %s", FormatBytes(total))}
}

// memTotal reads MemTotal (in bytes) from a /proc/meminfo file.
func memTotal(path string) (int64, error) {
	fh, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer fh.Close()
	sc := bufio.NewScanner(fh)
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), "MemTotal:")
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		if len(f) != 2 || f[1] != "kB" {
			return 0, fmt.Errorf("%s: MemTotal line %q, want \"MemTotal: <n> kB\"", path, sc.Text())
		}
		kb, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil || kb <= 0 || kb > math.MaxInt64/1024 {
			return 0, fmt.Errorf("%s: MemTotal %q is not a size", path, f[0])
		}
		return kb * 1024, nil
	}
	if err := sc.Err(); err != nil {
		return 0, fmt.Errorf("%s: %w", path, err)
	}
	return 0, fmt.Errorf("%s has no MemTotal line", path)
}

// ParseLimit parses a memory limit (Options.MaxMemory): a size with a binary unit (B, KiB, MiB, GiB, TiB;
// K, M, G and T mean the same; KB, MB, GB and TB are powers of 1000), e.g. "32GiB" or "1.5G", or
// 0 or "off" for no limit.
func ParseLimit(s string) (Limit, error) {
	v := strings.TrimSpace(s)
	if v == "0" || strings.EqualFold(v, "off") {
		return NoLimit(), nil
	}
	i := strings.IndexFunc(v, func(r rune) bool { return (r < '0' || r > '9') && r != '.' })
	num, unit := v, ""
	if i >= 0 {
		num, unit = strings.TrimSpace(v[:i]), v[i:]
	}
	mult := map[string]float64{"": 1, "b": 1,
		"k": 1 << 10, "kib": 1 << 10, "m": 1 << 20, "mib": 1 << 20, "g": 1 << 30, "gib": 1 << 30, "t": 1 << 40, "tib": 1 << 40,
		"kb": 1e3, "mb": 1e6, "gb": 1e9, "tb": 1e12}[strings.ToLower(unit)]
	x, err := strconv.ParseFloat(num, 64)
	if err != nil || mult == 0 || !(x > 0) || x*mult >= math.MaxInt64 {
		return Limit{}, fmt.Errorf("memory size %q: want a size such as 32GiB, 1.5G or 500MiB, or 0 or off for no limit", s)
	}
	b := int64(x * mult)
	return Limit{Bytes: b, From: "given as " + v}, nil
}

// FormatBytes prints a size in binary units with 2 or 3 significant digits: "61 GiB", "1.5 GiB",
// "512 MiB".
func FormatBytes(b int64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}
	x, u := float64(b), 0
	for math.Abs(x) >= 1024 && u < len(units)-1 {
		x /= 1024
		u++
	}
	switch {
	case u == 0:
		return fmt.Sprintf("%d B", b)
	case math.Abs(x) >= 10:
		return fmt.Sprintf("%.0f %s", x, units[u])
	default:
		return fmt.Sprintf("%.1f %s", x, units[u])
	}
}

// LimitError is the refusal of a run whose estimate is above the limit. It wraps ErrTooLarge. It
// names config fields by their JSON names; Text names them as a caller does (its flags).
type LimitError struct {
	Subject  Subject
	Estimate Estimate
	Limit    Limit
}

// Subject is the configuration a memory message is about: its env and the field that sets
// its number of actions (grid or base, by JSON name; "" for neither) with its value.
type Subject struct {
	Env     string
	Field   string
	Size    int
	Actions int
}

func (e *LimitError) Error() string {
	return e.Text(func(field string) string {
		if field == MaxField {
			return "the memory limit (train.Options.MaxMemory)"
		}
		return field
	})
}

// MaxField is the name Text asks for the memory limit, train.Options.MaxMemory (not a config
// field: it bounds the run without changing it).
const MaxField = "max_memory"

// Text is the message with every field named by name, and the memory limit by
// name(MaxField).
func (e *LimitError) Text(name func(field string) string) string {
	big := e.Estimate.Largest()
	subject := fmt.Sprintf("%s (%d actions)", e.Subject.Env, e.Subject.Actions)
	if e.Subject.Field != "" {
		subject = fmt.Sprintf("%s at %s %d (%d actions)", e.Subject.Env, name(e.Subject.Field), e.Subject.Size, e.Subject.Actions)
	}
	lower := make([]string, len(big.Lower))
	for i, f := range big.Lower {
		lower[i] = name(f)
	}
	if n := len(lower); n > 1 {
		lower = append(lower[:n-2], lower[n-2]+" or "+lower[n-1])
	}
	return fmt.Sprintf("%s needs about %s, mostly %s (%s: %s), above the limit of %s (%s); lower %s, or raise %s (or turn it off)",
		subject, FormatBytes(e.Estimate.Total()), big.What, big.Detail, FormatBytes(big.Bytes),
		FormatBytes(e.Limit.Bytes), e.Limit.From, strings.Join(lower, ", "), name(MaxField))
}

// Unwrap makes errors.Is(err, ErrTooLarge) hold.
func (e *LimitError) Unwrap() error { return ErrTooLarge }

// Check refuses est when it is above limit (the zero Limit: DefaultLimit). subject names the
// configuration in the message.
func Check(limit Limit, subject Subject, est Estimate) error {
	if limit.Off() {
		return nil
	}
	if limit.Bytes == 0 {
		limit = DefaultLimit()
	}
	if est.Total() <= limit.Bytes {
		return nil
	}
	return &LimitError{Subject: subject, Estimate: est, Limit: limit}
}

// SubjectOf is cfg's size for a memory message: the field that sets |A|.
func SubjectOf(cfg config.Config, numActions int) Subject {
	switch {
	case cfg.Grid > 0:
		return Subject{Env: cfg.Env, Field: "grid", Size: cfg.Grid, Actions: numActions}
	case isAlgorithmic(cfg.Env):
		return Subject{Env: cfg.Env, Field: "base", Size: cfg.Base, Actions: numActions}
	}
	return Subject{Env: cfg.Env, Actions: numActions}
}

// headLayout is the head layout of cfg for numActions actions. The estimates are made of valid
// configs (Run validates first); for an invalid one they count the logits alone.
func headLayout(cfg config.Config, numActions int) pcl.Heads {
	h, err := pcl.NewHeads(cfg.LearnerConfig, numActions)
	if err != nil {
		return pcl.Heads{Sizes: []int{numActions}, VHead: -1, LambdaHead: -1, BigHead: -1}
	}
	return h
}

// isAlgorithmic reports whether env is one of the algorithmic tasks, whose |A| --base sets.
func isAlgorithmic(env string) bool {
	_, err := algorithmic.TaskByID(env)
	return err == nil
}

// paramsPart is the memory of a network's params values: each with its gradient, Adam's two
// moments and its copy in the checkpoint being written; sizeFields are the config fields that
// lower it.
func paramsPart(params float64, sizeFields []string) Part {
	return Part{
		What:   "the parameters",
		Detail: fmt.Sprintf("%s values, each with its gradient, Adam's two moments and its copy in the checkpoint being written", count(params)),
		Bytes:  clampBytes(params * checkpointFactor),
		Lower:  sizeFields,
	}
}
