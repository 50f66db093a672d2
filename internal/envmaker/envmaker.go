// Package envmaker is the env factory: it makes the VecEnv an envs.VecRequest names, a Go-native id
// from the registry, any other id as a Gymnasium env through the bridge, from Python servers it
// starts itself (with the project's .venv) or from running servers given by endpoint. It knows
// neither the trainer nor its config: the trainer asks for envs through its own small interface
// (train.EnvFactory), and the program composes the two.
package envmaker

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/sparsepcl/sparsepcl/agent/success"
	"github.com/sparsepcl/sparsepcl/bridge"
	"github.com/sparsepcl/sparsepcl/bridge/auth"
	"github.com/sparsepcl/sparsepcl/envs"
)

// ErrUnknownEnv marks an env id that neither the Go registry nor the env server knows.
var ErrUnknownEnv = errors.New("unknown environment id")

// ErrNoPython marks a remote env that cannot be served because there is no Python interpreter with
// the server's packages (no .venv at the root, and SPARSEPCL_PYTHON unset or naming a missing
// file). A program tells its user how to install one.
var ErrNoPython = errors.New("no Python environment for the env server")

// Maker makes VecEnvs from requests (it implements train.EnvFactory) and answers questions about
// env ids (RewardThreshold) and replays (Render).
type Maker struct {
	// Registry holds the Go-native ids; any id it does not hold is made through the bridge.
	Registry *envs.Registry
	// Servers are endpoints of running servers (tcp://host:port); the copies are spread over them.
	// Empty: start one local server per VecEnv, stopped when it is closed. Servers given make every
	// id remote, Go-native or not.
	Servers []string
	// Credentials, when not nil, authenticate the connections to Servers (ZeroMQ PLAIN; see
	// bridge.Config.Credentials). The servers it starts itself listen on ipc and take none.
	Credentials *auth.Credentials
	// Remote serves even Go-native ids (CartPole-v1, Copy-v0, ...) from the Python server: the
	// Gymnasium originals, e.g. to check a Go port against them.
	ForceRemote bool
	// Server says how to start local servers.
	Server bridge.ServerOptions
	// Kwargs are passed to gymnasium.make for remote ids.
	Kwargs map[string]any

	mu    sync.Mutex
	hello *bridge.Hello // the handshake of the last remote VecEnv made
}

// EnvServerVersions returns the versions the env server of the last remote
// VecEnv made reported in its handshake (nil when none was made).
func (m *Maker) EnvServerVersions() map[string]string {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.hello == nil {
		return nil
	}
	h := m.hello
	out := map[string]string{"protocol": strconv.Itoa(h.Protocol)}
	for k, v := range map[string]string{"server": h.Server, "python": h.Python, "gymnasium": h.Gymnasium, "mujoco": h.MuJoCo,
		"numpy": h.NumPy, "pyzmq": h.PyZMQ, "msgpack": h.Msgpack} {
		if v != "" {
			out[k] = v
		}
	}
	return out
}

// remember records env's handshake for EnvServerVersions and returns env.
func (m *Maker) remember(env *bridge.VecEnv) *bridge.VecEnv {
	m.mu.Lock()
	defer m.mu.Unlock()
	h := env.Hello
	m.hello = &h
	return env
}

// Remote reports whether id is served through the bridge rather than Go-native.
func (m *Maker) Remote(id string) bool {
	if m.Registry == nil || m.ForceRemote || len(m.Servers) > 0 {
		return true
	}
	_, err := m.Registry.Lookup(id)
	return err != nil
}

// MakeVec makes the VecEnv req names: from the registry when req.ID is Go-native (with req.Options),
// else through the bridge (with Kwargs).
func (m *Maker) MakeVec(ctx context.Context, req envs.VecRequest) (envs.VecEnv, error) {
	if !m.Remote(req.ID) {
		return m.Registry.MakeRequest(req)
	}
	bc := bridge.Config{EnvID: req.ID, Kwargs: m.Kwargs, NumEnvs: req.Copies, Autoreset: req.Autoreset, Credentials: m.Credentials}
	// The servers live as long as the VecEnv, not the caller's context: an interrupted run still
	// saves its checkpoint and closes them itself.
	ctx = context.WithoutCancel(ctx)
	if len(m.Servers) > 0 {
		env, err := bridge.Dial(ctx, bc, m.Servers...)
		if err != nil {
			return nil, fmt.Errorf("envmaker: %s on %v: %w", req.ID, m.Servers, markUnknown(err))
		}
		return m.remember(env), nil
	}
	opts := m.Server
	if err := checkPython(&opts); err != nil {
		return nil, fmt.Errorf("envmaker: %s is not a Go-native env, so it is served by the Python env server, but %w", req.ID, err)
	}
	env, err := bridge.Start(ctx, bc, 1, opts)
	if err != nil {
		return nil, fmt.Errorf("envmaker: %s through a local server: %w", req.ID, markUnknown(err))
	}
	return m.remember(env), nil
}

// RewardThreshold is the reward_threshold registered for id: Gymnasium's value for the Go ports and
// the algorithmic tasks (success.RegisteredThreshold), and for remote ids what the env server's
// gymnasium.spec says, asked of the first running server or of one started for the question. ok is
// false when the id registers none. An id that the server does not know wraps ErrUnknownEnv.
func (m *Maker) RewardThreshold(ctx context.Context, id string) (threshold float64, ok bool, err error) {
	if !m.Remote(id) {
		threshold, ok = success.RegisteredThreshold(id)
		return threshold, ok, nil
	}
	opts := m.Server
	if len(m.Servers) == 0 {
		if err := checkPython(&opts); err != nil {
			return 0, false, fmt.Errorf("envmaker: %s is not a Go-native env, so it is served by the Python env server, but %w", id, err)
		}
	}
	spec, err := bridge.LookupSpec(ctx, id, opts, m.Credentials, m.Servers...)
	if err != nil {
		return 0, false, fmt.Errorf("envmaker: reward threshold of %s: %w", id, markUnknown(err))
	}
	if spec.RewardThreshold == nil {
		return 0, false, nil
	}
	return *spec.RewardThreshold, true, nil
}

// ContinuousActions reports whether id's action space is continuous (a Box), so that a run needs
// an action grid. It makes one copy of the env (through a server started for the question when id
// is remote) and closes it.
func (m *Maker) ContinuousActions(ctx context.Context, id string) (bool, error) {
	env, err := m.MakeVec(ctx, envs.VecRequest{ID: id, Copies: 1})
	if err != nil {
		return false, fmt.Errorf("action space of %s: %w", id, err)
	}
	defer env.Close()
	_, isBox := env.ActionSpace().(envs.Box)
	return isBox, nil
}

// checkPython resolves the server's root and interpreter, and refuses a missing interpreter with
// ErrNoPython.
func checkPython(opts *bridge.ServerOptions) error {
	if opts.Root == "" {
		root, err := bridge.FindRoot()
		if err != nil {
			return err
		}
		opts.Root = root
	}
	if opts.Python == "" {
		opts.Python = bridge.FindPython(opts.Root)
	}
	if opts.Python == "python3" { // FindPython's fallback: no .venv, no SPARSEPCL_PYTHON
		return fmt.Errorf("%w: none at %s and SPARSEPCL_PYTHON is not set", ErrNoPython, filepath.Join(opts.Root, ".venv"))
	}
	if _, err := os.Stat(opts.Python); err != nil && filepath.IsAbs(opts.Python) {
		if errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("%w: the interpreter %s does not exist", ErrNoPython, opts.Python)
		}
		return fmt.Errorf("the Python interpreter %s: %w", opts.Python, err)
	}
	return nil
}

// markUnknown adds ErrUnknownEnv to a server's refusal of an unregistered id.
func markUnknown(err error) error {
	var re *bridge.RemoteError
	if errors.As(err, &re) && re.Type == "UnknownEnv" {
		return fmt.Errorf("%w (neither Go-native nor registered in gymnasium): %w", ErrUnknownEnv, err)
	}
	return err
}

// RenderResult is what the replay renderer reports.
type RenderResult struct {
	Frames int     `json:"frames"`
	Steps  int     `json:"steps"`
	Return float64 `json:"return"`
}

// Render replays actions in env id from seed with the Python renderer (python_server/render.py,
// headless MuJoCo through EGL) and writes an animated GIF to out.
func (m *Maker) Render(ctx context.Context, id string, seed int64, actions []any, out string) (RenderResult, error) {
	opts := m.Server
	if err := checkPython(&opts); err != nil {
		return RenderResult{}, fmt.Errorf("envmaker: render: %w", err)
	}
	f, err := os.CreateTemp("", "sparsepcl-actions-*.json")
	if err != nil {
		return RenderResult{}, fmt.Errorf("envmaker: render: %w", err)
	}
	defer os.Remove(f.Name())
	if err := json.NewEncoder(f).Encode(actions); err != nil {
		f.Close()
		return RenderResult{}, fmt.Errorf("envmaker: render: write actions: %w", err)
	}
	if err := f.Close(); err != nil {
		return RenderResult{}, fmt.Errorf("envmaker: render: write actions: %w", err)
	}
	abs, err := filepath.Abs(out)
	if err != nil {
		return RenderResult{}, fmt.Errorf("envmaker: render: %w", err)
	}
	cmd := exec.CommandContext(ctx, opts.Python, "-m", "python_server.render", "--env", id, "--seed", strconv.FormatInt(seed, 10),
		"--actions", f.Name(), "--out", abs)
	cmd.Dir = opts.Root
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		tail := strings.TrimSpace(stderr.String())
		if i := strings.LastIndex(tail, "\n"); i >= 0 && len(tail) > 2000 {
			tail = tail[len(tail)-2000:]
		}
		return RenderResult{}, fmt.Errorf("envmaker: render %s: %w: %s", id, err, tail)
	}
	var res RenderResult
	if err := json.Unmarshal(bytes.TrimSpace(stdout.Bytes()), &res); err != nil {
		return RenderResult{}, fmt.Errorf("envmaker: render %s: unreadable report %q: %w", id, stdout.String(), err)
	}
	return res, nil
}
