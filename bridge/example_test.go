package bridge_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/sparsepcl/sparsepcl/bridge"
	"github.com/sparsepcl/sparsepcl/envs"
	"github.com/sparsepcl/sparsepcl/envs/wrappers"
)

// Serve 16 copies of MuJoCo HalfCheetah to Go from a Python server that the client starts itself,
// and see its 6-dimensional torque box as one Discrete(3^6 = 729) action grid.
func ExampleStart() {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	seeds := make([]int64, 16)
	for i := range seeds {
		seeds[i] = int64(i)
	}
	remote, err := bridge.Start(ctx, bridge.Config{EnvID: "HalfCheetah-v5", NumEnvs: 16, Seeds: seeds}, 1, bridge.ServerOptions{})
	if err != nil {
		fmt.Println(err) // e.g. the interpreter ($SPARSEPCL_PYTHON or .venv/bin/python) lacks gymnasium[mujoco]
		return
	}
	defer remote.Close()
	venv, err := wrappers.DiscretizeVecActions(remote, 3)
	if err != nil {
		fmt.Println(err)
		return
	}
	if _, _, err := venv.Reset(ctx, envs.ResetRequest{}); err != nil {
		fmt.Println(err)
		return
	}
	actions := envs.NewArray(envs.Int64, 16)
	for i := range actions.Ints {
		actions.Ints[i] = 364 // the grid's centre: zero torque on every joint
	}
	res, err := venv.Step(ctx, actions)
	if err != nil {
		var remoteErr *bridge.RemoteError
		if errors.As(err, &remoteErr) {
			fmt.Println("copy", remoteErr.Copy, remoteErr.Traceback)
		}
		return
	}
	fmt.Println(venv.ActionSpace(), res.Obs.Shape, res.Obs.DType)
}

// Keep each of two servers busy: one sub-batch per server in flight, and the next actions sent to
// whichever server answered first.
func ExampleVecEnv_WaitAny() {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	const n, parts = 16, 2
	venv, err := bridge.Start(ctx, bridge.Config{EnvID: "HalfCheetah-v5", NumEnvs: n}, parts, bridge.ServerOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer venv.Close()
	if _, _, err := venv.Reset(ctx, envs.ResetRequest{}); err != nil {
		fmt.Println(err)
		return
	}
	actions := envs.NewBatch(venv.ActionSpace(), n) // zero torque; a policy would fill these
	pending := make([]*bridge.PendingStep, parts)
	send := func(j int) (err error) {
		lo, hi := j*n/parts, (j+1)*n/parts
		pending[j], err = venv.StepAsync(ctx, lo, hi, actions.RowRange(lo, hi))
		return err
	}
	for j := range parts {
		if err := send(j); err != nil {
			fmt.Println(err)
			return
		}
	}
	for range 100 {
		j, res, err := venv.WaitAny(ctx, pending)
		if err != nil {
			fmt.Println(err)
			return
		}
		pending[j] = nil
		_ = res.Obs.RowRange(j*n/parts, (j+1)*n/parts) // the fresh rows: compute their next actions here
		if err := send(j); err != nil {
			fmt.Println(err)
			return
		}
	}
	for _, p := range pending {
		if _, err := p.Wait(ctx); err != nil {
			fmt.Println(err)
		}
	}
}
