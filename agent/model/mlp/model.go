package mlp

import (
	"fmt"

	"github.com/sparsepcl/sparsepcl/agent/config"
	"github.com/sparsepcl/sparsepcl/agent/nn"
	"github.com/sparsepcl/sparsepcl/agent/pcl"
	"github.com/sparsepcl/sparsepcl/agent/policy"
	"github.com/sparsepcl/sparsepcl/agent/tensor"
)

// Model is the paper's continuous-control network: a policy network (two tanh layers, then one
// linear head per policy output: the |A| logits, or Q in the unified form, and the multiplier
// heads of sparse and Tsallis PCL) and, in the separate form, a value network of the same shape
// with one output. It produces the heads in pcl.Heads' layout, one row per input row.
type Model struct {
	pcl.Heads
	Dim int
	// Norm normalises observations (nil: raw observations).
	Norm *Normalizer

	trunk   [2]*nn.Linear
	acts    [2]*tensor.Matrix // tanh outputs of the trunk
	dActs   [2]*tensor.Matrix
	outputs []*nn.Linear // per head; nil at VHead
	value   *nn.MLP      // nil in the unified form
	heads   []*tensor.Matrix

	// valueScale multiplies the value network's output (V = valueScale * NN(x)), so that under
	// Adam's bounded steps V reaches the scale of the returns valueScale times sooner.
	valueScale   float32
	vOut, dvScal *tensor.Matrix

	// sparseLogits makes Backward pass head 0 through the output layer sparsely: the sparse PCL
	// gradient on the logits is non-zero only on the support and the taken action.
	sparseLogits bool
	sparseLimit  float64        // density above which the dense pass is taken (sparseDensityLimit)
	dyRows       nn.SparseRows  // the logits' gradient in sparse rows (filled by pcl.Objective)
	denseDy      *tensor.Matrix // dyRows written out, when the dense pass is taken

	// scaledLogits makes Backward pass soft PCL's head 0 through the output layer as row factors
	// on the exponentials the objective left in dHeads[0] (nn.RowScaled), at scaledLogitsMinActions
	// actions and more.
	scaledLogits bool
	dyScaled     nn.RowScaled
	// logitRange is the output layer's report of its rows' range, for soft PCL's first pass
	// (pcl.Heads.Range); nil for the other algorithms.
	logitRange *tensor.RowRange

	params       []*nn.Param // every parameter, the policy network's first (listParams)
	policyParams int         // how many of params are the policy network's

	// scratch of ForwardBatch and Act
	x, actX *tensor.Matrix
	// noLogits is head 0 at 0 rows, of a forward without the logits (ForwardTrunk).
	noLogits *tensor.Matrix
	steps    pcl.Steps
}

// New builds the networks of cfg for observation vectors of dim and numActions actions.
func New(cfg config.Config, dim, numActions int, eng *tensor.Engine) (*Model, error) {
	if dim < 1 || numActions < 1 {
		return nil, fmt.Errorf("mlp: model needs a positive input size and action count, have %d and %d", dim, numActions)
	}
	if eng == nil {
		return nil, fmt.Errorf("mlp: model needs a tensor engine")
	}
	h, err := pcl.NewHeads(cfg.LearnerConfig, numActions)
	if err != nil {
		return nil, err
	}
	m := &Model{Heads: h, Dim: dim, heads: make([]*tensor.Matrix, len(h.Sizes))}
	H := cfg.MLPHidden
	rng := nn.NewRand(cfg.Seed, 11)
	if m.trunk[0], err = nn.NewLinear(eng, "policy.l0", dim, H, true, rng); err != nil {
		return nil, err
	}
	if m.trunk[1], err = nn.NewLinear(eng, "policy.l1", H, H, true, rng); err != nil {
		return nil, err
	}
	for i := range m.acts {
		m.acts[i], m.dActs[i] = tensor.New(0, H), tensor.New(0, H)
	}
	m.outputs = make([]*nn.Linear, len(h.Sizes))
	for i, size := range h.Sizes {
		if i == h.VHead {
			continue
		}
		if m.outputs[i], err = nn.NewLinear(eng, fmt.Sprintf("policy.head%d", i), H, size, true, rng); err != nil {
			return nil, err
		}
	}
	// A small logit layer makes the initial policy near uniform (CleanRL's PPO initialises its
	// policy head with std 0.01): with Glorot weights the 64 -> |A| layer spreads the logits over
	// about +-0.4, which a sparsemax turns into a policy with a support of a few dozen actions.
	var lambdaBias *nn.Param
	if h.LambdaHead >= 0 {
		lambdaBias = m.outputs[h.LambdaHead].B
	}
	pcl.InitHeads(cfg, m.outputs[0].W, m.outputs[0].B, lambdaBias)
	if h.VHead >= 0 {
		if m.value, err = nn.NewMLP(eng, "value", []int{dim, H, H, 1}, true, nn.NewRand(cfg.Seed, 12)); err != nil {
			return nil, err
		}
	}
	m.listParams()
	m.valueScale, m.vOut, m.dvScal = float32(cfg.ValueScale), tensor.New(0, 1), tensor.New(0, 1)
	m.sparseLogits = h.TakesSparseGrad()
	m.scaledLogits = h.TakesScaledGrad() && numActions >= scaledLogitsMinActions
	if m.scaledLogits { // the row factors already change the bits: the exponentials may too
		m.Heads.Exp = policy.ExpFused
	}
	if h.TakesRowRange() {
		m.logitRange = &tensor.RowRange{}
		m.outputs[0].Range = m.logitRange
	}
	m.sparseLimit = sparseDensityLimit
	return m, nil
}

// Params lists the trainable parameters in a fixed order (the checkpoint order): the policy
// network's, then the value network's.
func (m *Model) Params() []*nn.Param { return m.params }

// StateParams are the normaliser's statistics (none without a normaliser), which a checkpoint
// keeps after the optimiser's state.
func (m *Model) StateParams() []*nn.Param {
	if m.Norm != nil {
		return []*nn.Param{m.Norm.Stats}
	}
	return nil
}

// InputDim is the length of an encoded observation (collect.Actor).
func (m *Model) InputDim() int { return m.Dim }

// Layout is the model's heads (pcl.Network, collect.Actor).
func (m *Model) Layout() *pcl.Heads { return &m.Heads }

// Input writes the network input of the encoded observations obs (rows x Dim) into x, normalised
// when the model normalises.
func (m *Model) Input(x *tensor.Matrix, obs []float32) {
	x.Reshape(len(obs)/m.Dim, m.Dim)
	if m.Norm != nil {
		m.Norm.Apply(x.Data, obs)
		return
	}
	copy(x.Data, obs)
}

// PolicyParams are the policy network's parameters: its trunk and every head on it (the logits
// or Q, and the multiplier heads).
func (m *Model) PolicyParams() []*nn.Param { return m.params[:m.policyParams:m.policyParams] }

// ValueParams are the value network's parameters (none in the unified form).
func (m *Model) ValueParams() []*nn.Param { return m.params[m.policyParams:] }

// listParams lists the parameters once, in the checkpoint's order: the policy network's trunk and
// every head on it (the logits or Q, and the multiplier heads), then the value network's. The
// learner asks for them several times a step; the list must not be modified.
func (m *Model) listParams() {
	for _, l := range m.trunk {
		m.params = append(m.params, l.Params()...)
	}
	for _, l := range m.outputs {
		if l != nil {
			m.params = append(m.params, l.Params()...)
		}
	}
	m.policyParams = len(m.params)
	if m.value != nil {
		m.params = append(m.params, m.value.Params()...)
	}
}

// Forward computes every head for the rows of x (rows x Dim) and keeps what Backward needs. The
// returned matrices belong to the model and are valid until the next Forward.
func (m *Model) Forward(x *tensor.Matrix) ([]*tensor.Matrix, error) {
	_, heads, err := m.forward(x, true)
	return heads, err
}

// forward is Forward, without head 0 (left at 0 rows) unless logits is set; it also returns the
// trunk's output rows, the input of every policy head.
func (m *Model) forward(x *tensor.Matrix, logits bool) (*tensor.Matrix, []*tensor.Matrix, error) {
	if x.Cols != m.Dim {
		return nil, nil, fmt.Errorf("mlp: model input %s, want ?x%d", x.Shape(), m.Dim)
	}
	// The objective writes the logits' gradient straight into sparse rows when the output layer
	// takes it sparsely.
	m.Heads.SparseGrad, m.Heads.ScaledGrad, m.Heads.Range = nil, nil, m.logitRange
	if m.sparseLogits {
		m.Heads.SparseGrad = &m.dyRows
	}
	if m.scaledLogits {
		m.Heads.ScaledGrad = &m.dyScaled
	}
	in := x
	for i, l := range m.trunk {
		y, err := l.Forward(in)
		if err != nil {
			return nil, nil, fmt.Errorf("mlp: policy forward: %w", err)
		}
		a := m.acts[i]
		a.Reshape(y.Rows, y.Cols)
		tanhInto(a.Data, y.Data)
		in = a
	}
	for i, l := range m.outputs {
		if l == nil {
			continue
		}
		if i == 0 && !logits {
			if m.noLogits == nil {
				m.noLogits = tensor.New(0, l.Out)
			}
			m.heads[0] = m.noLogits
			continue
		}
		y, err := l.Forward(in)
		if err != nil {
			return nil, nil, fmt.Errorf("mlp: policy forward: %w", err)
		}
		m.heads[i] = y
	}
	if m.value != nil {
		v, err := m.value.Forward(x)
		if err != nil {
			return nil, nil, fmt.Errorf("mlp: value forward: %w", err)
		}
		if m.valueScale != 1 {
			m.vOut.Reshape(v.Rows, v.Cols)
			for k, y := range v.Data {
				m.vOut.Data[k] = m.valueScale * y
			}
			v = m.vOut
		}
		m.heads[m.VHead] = v
	}
	return in, m.heads, nil
}

// LogitLayer is the output layer of head 0 (pcl.FusedNetwork).
func (m *Model) LogitLayer() *nn.Linear { return m.outputs[0] }

// SparseGradLimit is sparseDensityLimit (pcl.FusedNetwork).
func (m *Model) SparseGradLimit() float64 { return m.sparseLimit }

// BackwardTrunk is Backward with the gradient at the trunk's output from head 0 given as dx
// (pcl.FusedNetwork): the other heads' gradients are added to it in Backward's order.
func (m *Model) BackwardTrunk(dHeads []*tensor.Matrix, dx *tensor.Matrix) error {
	if err := tensor.CheckShape(dx, m.acts[1].Rows, m.acts[1].Cols, "mlp: trunk gradient"); err != nil {
		return err
	}
	return m.backward(dHeads, dx)
}

// Backward accumulates the parameter gradients for the head gradients dHeads of the last Forward.
func (m *Model) Backward(dHeads []*tensor.Matrix) error { return m.backward(dHeads, nil) }

// backward is Backward; with dLogits not nil, head 0's gradient at the trunk's output is dLogits
// and dHeads[0] is not read.
func (m *Model) backward(dHeads []*tensor.Matrix, dLogits *tensor.Matrix) error {
	if len(dHeads) != len(m.heads) {
		return fmt.Errorf("mlp: %d head gradients for %d heads", len(dHeads), len(m.heads))
	}
	d := m.dActs[1]
	d.Reshape(m.acts[1].Rows, m.acts[1].Cols)
	first := true
	for i, l := range m.outputs {
		if l == nil {
			continue
		}
		if i == 0 && dLogits != nil {
			copy(d.Data, dLogits.Data)
			first = false
			continue
		}
		var err error
		switch {
		case i == 0 && m.sparseLogits:
			err = m.backwardSparseLogits(l, dHeads[0], d, !first)
		case i == 0 && m.scaledLogits && m.dyScaled.Rows() > 0:
			err = l.BackwardRowScaled(dHeads[0], &m.dyScaled, d, !first)
		default:
			err = l.Backward(dHeads[i], d, !first)
		}
		if err != nil {
			return fmt.Errorf("mlp: policy backward: %w", err)
		}
		first = false
	}
	for i := len(m.trunk) - 1; i >= 0; i-- {
		a := m.acts[i]
		nn.TanhBackward(d.Data, a.Data)
		var dx *tensor.Matrix
		if i > 0 {
			dx = m.dActs[i-1]
			dx.Reshape(a.Rows, m.trunk[i].In)
		}
		if err := m.trunk[i].Backward(d, dx, false); err != nil {
			return fmt.Errorf("mlp: policy backward: %w", err)
		}
		d = dx
	}
	if m.value != nil {
		dv := dHeads[m.VHead]
		if m.valueScale != 1 {
			m.dvScal.Reshape(dv.Rows, dv.Cols)
			for k, g := range dv.Data {
				m.dvScal.Data[k] = m.valueScale * g
			}
			dv = m.dvScal
		}
		if err := m.value.BackwardParams(dv); err != nil { // the observations need no gradient
			return fmt.Errorf("mlp: value backward: %w", err)
		}
	}
	return nil
}

func tanhInto(dst, src []float32) { nn.TanhInto(dst, src) }

// scaledLogitsMinActions is the fewest actions at which soft PCL's logit gradient goes through the
// output layer as row factors (Model.scaledLogits). What that saves is a pass that reads and writes
// every logit's gradient: at 5^6 = 15,625 actions and 2,525 rows, 39M entries, 20-30 ms of a
// step of 300-400 on one core; at 3^6 it would be 1.8M (about 1 ms), and there the gradient
// written out keeps the golden runs' bits.
const scaledLogitsMinActions = 4096

// sparseDensityLimit is the share of non-zero logit gradients above which the dense pass is
// taken. nn.BenchmarkBackwardSparse (64 inputs, 2,500 rows) puts the crossover near 12% at
// 15,625 actions and 10-20% at 729 since the transposed sparse kernel (it was 4-5% before); an
// untrained sparsemax policy can still have all actions in its support.
const sparseDensityLimit = 0.1

// backwardSparseLogits passes the logits' gradient through the output layer l using only its
// non-zero entries (the support and the taken action of each row): O(support) per row instead of
// O(|A|) for the weight gradient and the gradient to the trunk. While the supports are wide it
// takes the dense pass. The gradient comes as the sparse rows that pcl.Objective wrote into
// m.dyRows (dy has 0 rows then) or, from the objective's reference path, as the dense dy.
func (m *Model) backwardSparseLogits(l *nn.Linear, dy, dx *tensor.Matrix, accumulate bool) error {
	if dy.Rows == 0 && dx.Rows > 0 {
		if m.dyRows.Rows != dx.Rows || m.dyRows.Cols != dy.Cols {
			return fmt.Errorf("mlp: sparse logit gradient is %dx%d, want %dx%d", m.dyRows.Rows, m.dyRows.Cols, dx.Rows, dy.Cols)
		}
		if float64(m.dyRows.NNZ()) > m.sparseLimit*float64(m.dyRows.Rows*m.dyRows.Cols) {
			if m.denseDy == nil {
				m.denseDy = tensor.New(0, dy.Cols)
			}
			m.denseDy.Reshape(m.dyRows.Rows, m.dyRows.Cols)
			if err := m.dyRows.ToDense(m.denseDy); err != nil {
				return err
			}
			return l.Backward(m.denseDy, dx, accumulate)
		}
		return l.BackwardSparse(&m.dyRows, dx, accumulate)
	}
	m.dyRows.Reset(dy.Cols)
	for r := range dy.Rows {
		if err := m.dyRows.AppendDenseRow(dy.Row(r)); err != nil {
			return err
		}
	}
	if float64(m.dyRows.NNZ()) > m.sparseLimit*float64(dy.Rows*dy.Cols) {
		return l.Backward(dy, dx, accumulate)
	}
	return l.BackwardSparse(&m.dyRows, dx, accumulate)
}
