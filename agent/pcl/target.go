package pcl

import (
	"fmt"

	"github.com/sparsepcl/sparsepcl/agent/nn"
	"github.com/sparsepcl/sparsepcl/agent/tensor"
)

// target is an exponentially lagged copy of a network's parameters, θ̄ ← lag·θ̄ + (1−lag)·θ after
// every gradient step, from which the consistencies bootstrap (the released Trust-PCL's
// use_target_values with target_network_lag). A bootstrap value that moves with every step chases
// itself at a high replay ratio; a lagged one moves a hundred times slower at lag 0.99.
type target struct {
	lag    float64
	params []*nn.Param // the lagged values, in the network's Params order
	values []float64   // V of the last batch's rows under the lagged parameters
}

// newTarget starts the lagged copy at the network's current parameters.
func newTarget(lag float64, online []*nn.Param) *target {
	t := &target{lag: lag}
	for _, p := range online {
		t.params = append(t.params, &nn.Param{Name: "target." + p.Name, Value: p.Value.Clone(), Grad: tensor.New(0, 0)})
	}
	return t
}

// update moves the lagged parameters toward the online ones by one step of the lag.
func (t *target) update(online []*nn.Param) {
	a, b := float32(t.lag), float32(1-t.lag)
	for i, p := range online {
		dst := t.params[i].Value.Data
		for j, v := range p.Value.Data {
			dst[j] = a*dst[j] + b*v
		}
	}
}

// swap exchanges the online and the lagged parameter values element by element (the layers may
// hold their matrices' slices), so that the network computes with the lagged ones until the next
// swap.
func (t *target) swap(online []*nn.Param) {
	for i, p := range online {
		lagged := t.params[i].Value.Data
		for j, v := range p.Value.Data {
			p.Value.Data[j], lagged[j] = lagged[j], v
		}
	}
}

// bootstrapValues computes V at every row of batch under the lagged parameters (the value head,
// or the value operator of the lagged Q in the unified form, at the current weight) and returns
// them, (T+1)*B, time-major; with a trust region it also leaves the lagged policy's step shifts
// in the objective. The network's forward state is that of the lagged pass afterwards:
// the caller runs its own forward before any backward.
func (l *Learner[T, N]) bootstrapValues(batch []T) ([]float64, error) {
	t := l.target
	online := l.Model.Params()
	t.swap(online)
	heads, steps, err := l.Model.ForwardBatch(batch)
	if err == nil {
		if tr := &l.obj.trust; tr.Lambda > 0 {
			err = tr.laggedShifts(l.Model.Layout(), heads, steps, l.obj.Workers)
		}
		if err == nil {
			err = t.readValues(&l.obj, heads, steps)
		}
	}
	t.swap(online)
	if err != nil {
		return nil, fmt.Errorf("pcl: lagged network: %w", err)
	}
	return t.values, nil
}

// readValues sets t.values to V of the lagged pass's rows. With a value head (the separate form)
// V is that head, read off directly: evaluating the lagged policy's consistency for it would
// cost a policy pass over every row (a sparsemax or a softmax over 15,625 logits at 5^6) whose
// only use is a value the head already holds. The unified form's V is the value operator of
// the lagged Q, so it takes the objective's pass.
func (t *target) readValues(obj *Objective, heads []*tensor.Matrix, s Steps) error {
	rows := (s.T + 1) * s.B
	t.values = grow(t.values, rows)
	if vh := obj.Heads.VHead; vh >= 0 {
		// as Evaluate writes them: 0 past each sequence's bootstrap row
		clear(t.values)
		v := heads[vh].Data
		for b := range s.B {
			for tt := 0; tt <= s.Lengths[b]; tt++ {
				t.values[tt*s.B+b] = float64(v[tt*s.B+b])
			}
		}
		return nil
	}
	obj.Targets = nil
	if _, err := obj.Evaluate(heads, s, nil); err != nil {
		return err
	}
	copy(t.values, obj.in.Values)
	return nil
}
