package classic

import (
	"fmt"
	"math"

	"github.com/sparsepcl/sparsepcl/envs"
	"github.com/sparsepcl/sparsepcl/envs/classic/nprand"
)

// sim is the dynamics of one copy. Actions reach it validated: an index for Discrete action spaces, a
// float32 value (held in a float64) for Box ones.
type sim interface {
	reset(rng *nprand.Generator, b bounds, obs []float64)
	step(a float64, obs []float64) (reward float64, terminated bool)
}

// bounds are the parsed reset options: low[0], high[0] for the envs drawing every component from one
// interval, (low[i], high[i]) per component for Pendulum.
type bounds struct{ low, high [2]float64 }

type resetKind uint8

const (
	resetLowHigh resetKind = iota // "low", "high": utils.maybe_parse_reset_bounds
	resetXY                       // "x_init", "y_init": Pendulum
)

// spec is one environment id.
type spec struct {
	id        string
	summary   string
	maxSteps  int
	obs       envs.Box
	act       envs.Space
	discrete  int64 // number of actions, or 0 for a Box action
	resetKind resetKind
	defLow    float64 // resetLowHigh defaults; resetXY: x_init, y_init defaults
	defHigh   float64
	makeKey   string // the env's own gymnasium.make keyword, if any
	newSim    func(cfg config) sim
}

// config is a parsed set of make options.
type config struct {
	maxSteps     int
	autoreset    envs.AutoresetMode
	suttonBarto  bool
	goalVelocity float64
	g            float64
}

const (
	// OptMaxEpisodeSteps overrides the id's TimeLimit.
	OptMaxEpisodeSteps = "max_episode_steps"
	// OptAutoreset is the VecEnv autoreset mode.
	OptAutoreset = "autoreset"
	// OptSuttonBartoReward is CartPole's sutton_barto_reward.
	OptSuttonBartoReward = "sutton_barto_reward"
	// OptGoalVelocity is the MountainCars' goal_velocity.
	OptGoalVelocity = "goal_velocity"
	// OptGravity is Pendulum's g.
	OptGravity = "g"
	// Reset options.
	OptLow   = "low"
	OptHigh  = "high"
	OptXInit = "x_init"
	OptYInit = "y_init"
)

func box32(low, high []float64) envs.Box {
	b := envs.Box{Low: make([]float64, len(low)), High: make([]float64, len(high)), Shape: []int{len(low)}, Dtype: envs.Float32}
	for i := range low {
		b.Low[i], b.High[i] = f32(low[i]), f32(high[i])
	}
	return b
}

func symmetric(high ...float64) envs.Box {
	low := make([]float64, len(high))
	for i, h := range high {
		low[i] = -h
	}
	return box32(low, high)
}

var specs = []*spec{
	{
		id: "CartPole-v1", summary: "Gymnasium's cart-pole balancing task, bit-identical (Go-native)", maxSteps: 500,
		obs: symmetric(cpXThreshold*2, math.Inf(1), cpThetaThreshold*2, math.Inf(1)),
		act: envs.Discrete{N: 2}, discrete: 2, resetKind: resetLowHigh, defLow: -0.05, defHigh: 0.05,
		makeKey: OptSuttonBartoReward,
		newSim:  func(c config) sim { return &cartPole{suttonBarto: c.suttonBarto} },
	},
	{
		id: "Acrobot-v1", summary: "Gymnasium's two-link swing-up task, bit-identical (Go-native)", maxSteps: 500,
		obs: symmetric(1, 1, 1, 1, acMaxVel1, acMaxVel2),
		act: envs.Discrete{N: 3}, discrete: 3, resetKind: resetLowHigh, defLow: -0.1, defHigh: 0.1,
		newSim: func(config) sim { return &acrobot{} },
	},
	{
		id: "MountainCar-v0", summary: "Gymnasium's mountain car, discrete pushes, bit-identical (Go-native)", maxSteps: 200,
		obs: box32([]float64{mcMinPosition, -mcMaxSpeed}, []float64{mcMaxPosition, mcMaxSpeed}),
		act: envs.Discrete{N: 3}, discrete: 3, resetKind: resetLowHigh, defLow: -0.6, defHigh: -0.4,
		makeKey: OptGoalVelocity,
		newSim:  func(c config) sim { return &mountainCar{goalVelocity: c.goalVelocity} },
	},
	{
		id: "MountainCarContinuous-v0", summary: "Gymnasium's mountain car, continuous force, bit-identical (Go-native)", maxSteps: 999,
		obs: box32([]float64{mcMinPosition, -mcMaxSpeed}, []float64{mcMaxPosition, mcMaxSpeed}),
		act: box32([]float64{-1}, []float64{1}), resetKind: resetLowHigh, defLow: -0.6, defHigh: -0.4,
		makeKey: OptGoalVelocity,
		newSim:  func(c config) sim { return &mountainCarContinuous{goalVelocity: c.goalVelocity} },
	},
	{
		id: "Pendulum-v1", summary: "Gymnasium's inverted pendulum swing-up, bit-identical (Go-native)", maxSteps: 200,
		obs: symmetric(1, 1, pdMaxSpeed),
		act: box32([]float64{-pdMaxTorque}, []float64{pdMaxTorque}), resetKind: resetXY, defLow: piVar, defHigh: 1.0,
		makeKey: OptGravity,
		newSim:  func(c config) sim { return &pendulum{g: c.g} },
	},
}

// IDs returns the environment ids of this package, in registration order.
func IDs() []string {
	ids := make([]string, len(specs))
	for i, s := range specs {
		ids[i] = s.id
	}
	return ids
}

func lookup(id string) (*spec, error) {
	for _, s := range specs {
		if s.id == id {
			return s, nil
		}
	}
	return nil, fmt.Errorf("classic: unknown environment id %q (known: %v)", id, IDs())
}

// MaxEpisodeSteps is the default TimeLimit of id (Gymnasium's max_episode_steps), 0 for unknown ids.
func MaxEpisodeSteps(id string) int {
	s, err := lookup(id)
	if err != nil {
		return 0
	}
	return s.maxSteps
}

// Register adds every id of this package to r, with single and vectorised factories.
func Register(r *envs.Registry) error {
	for _, s := range specs {
		id := s.id
		err := r.Register(id, envs.Factory{
			Make:    func(o map[string]any) (envs.Env, error) { return NewEnv(id, o) },
			MakeVec: func(n int, o map[string]any) (envs.VecEnv, error) { return NewVecEnv(id, n, o) },
			Summary: s.summary,
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// optFloat reads a real-number option given as any Go integer or float type.
func optFloat(options map[string]any, key string, def float64) (float64, error) {
	v, ok := options[key]
	if !ok {
		return def, nil
	}
	switch x := v.(type) {
	case float64:
		return x, nil
	case float32:
		return float64(x), nil
	case int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64:
		n, err := envs.Int64Of(x)
		if err != nil {
			return 0, fmt.Errorf("option %q: %w", key, err)
		}
		return float64(n), nil
	default:
		return 0, fmt.Errorf("option %q is a %T, want a number", key, v)
	}
}

func (s *spec) parseMake(options map[string]any, vec bool) (config, error) {
	keys := []string{OptMaxEpisodeSteps}
	if s.makeKey != "" {
		keys = append(keys, s.makeKey)
	}
	if vec {
		keys = append(keys, OptAutoreset)
	}
	cfg := config{g: 10.0}
	if err := envs.CheckOptionKeys(options, keys...); err != nil {
		return cfg, fmt.Errorf("%s: %w", s.id, err)
	}
	var err error
	if cfg.maxSteps, err = envs.OptionInt(options, OptMaxEpisodeSteps, s.maxSteps); err != nil {
		return cfg, fmt.Errorf("%s: %w", s.id, err)
	}
	if cfg.maxSteps < 1 {
		return cfg, fmt.Errorf("%s: option %q = %d, want >= 1", s.id, OptMaxEpisodeSteps, cfg.maxSteps)
	}
	if cfg.autoreset, err = envs.OptionAutoreset(options, OptAutoreset, envs.AutoresetNextStep); err != nil {
		return cfg, fmt.Errorf("%s: %w", s.id, err)
	}
	if cfg.suttonBarto, err = envs.OptionBool(options, OptSuttonBartoReward, false); err != nil {
		return cfg, fmt.Errorf("%s: %w", s.id, err)
	}
	if cfg.goalVelocity, err = optFloat(options, OptGoalVelocity, 0); err != nil {
		return cfg, fmt.Errorf("%s: %w", s.id, err)
	}
	if cfg.g, err = optFloat(options, OptGravity, 10.0); err != nil {
		return cfg, fmt.Errorf("%s: %w", s.id, err)
	}
	if math.IsNaN(cfg.goalVelocity) || math.IsNaN(cfg.g) || math.IsInf(cfg.g, 0) {
		return cfg, fmt.Errorf("%s: options must be finite numbers", s.id)
	}
	return cfg, nil
}

// resetValue looks key up in over, then in base.
func resetValue(base, over map[string]any, key string, def float64) (float64, error) {
	if _, ok := over[key]; ok {
		return optFloat(over, key, def)
	}
	return optFloat(base, key, def)
}

// parseReset reads the reset options of base merged with over (over wins), as Gymnasium reads its
// options dict, and checks the bounds as Gymnasium and numpy do.
func (s *spec) parseReset(base, over map[string]any) (bounds, error) {
	keys := []string{OptLow, OptHigh}
	if s.resetKind == resetXY {
		keys = []string{OptXInit, OptYInit}
	}
	if err := envs.CheckOptionKeys(base, keys...); err != nil {
		return bounds{}, fmt.Errorf("%s: reset: %w", s.id, err)
	}
	if err := envs.CheckOptionKeys(over, keys...); err != nil {
		return bounds{}, fmt.Errorf("%s: reset: %w", s.id, err)
	}
	a, err := resetValue(base, over, keys[0], s.defLow)
	if err != nil {
		return bounds{}, fmt.Errorf("%s: reset: %w", s.id, err)
	}
	b, err := resetValue(base, over, keys[1], s.defHigh)
	if err != nil {
		return bounds{}, fmt.Errorf("%s: reset: %w", s.id, err)
	}
	var bd bounds
	if s.resetKind == resetXY {
		bd = bounds{low: [2]float64{-a, -b}, high: [2]float64{a, b}}
		for i := range 2 {
			if err := nprand.CheckUniform(bd.low[i], bd.high[i]); err != nil {
				return bounds{}, fmt.Errorf("%s: reset: %s = %v: %w", s.id, keys[i], bd.high[i], err)
			}
		}
		return bd, nil
	}
	if a > b {
		return bounds{}, fmt.Errorf("%s: reset: lower bound (%v) must be lower than higher bound (%v)", s.id, a, b)
	}
	if err := nprand.CheckUniform(a, b); err != nil {
		return bounds{}, fmt.Errorf("%s: reset: bounds [%v, %v]: %w", s.id, a, b, err)
	}
	return bounds{low: [2]float64{a}, high: [2]float64{b}}, nil
}

// defaultBounds are the bounds of a reset without options.
func (s *spec) defaultBounds() bounds {
	if s.resetKind == resetXY {
		return bounds{low: [2]float64{-s.defLow, -s.defHigh}, high: [2]float64{s.defLow, s.defHigh}}
	}
	return bounds{low: [2]float64{s.defLow}, high: [2]float64{s.defHigh}}
}

// checkFloatAction validates a Box action value and returns it as float32, the action dtype.
func (s *spec) checkFloatAction(x float64) (float64, error) {
	b := s.act.(envs.Box)
	if math.IsNaN(x) || x < b.Low[0] || x > b.High[0] {
		return 0, fmt.Errorf("%s: action %v outside the action space %v", s.id, x, b)
	}
	return f32(x), nil
}

func (s *spec) checkIntAction(a int64) (float64, error) {
	if a < 0 || a >= s.discrete {
		return 0, fmt.Errorf("%s: action %d out of range [0, %d)", s.id, a, s.discrete)
	}
	return float64(a), nil
}

// action validates a single Env's action (the canonical value of the action space: int64 for a
// Discrete, []float64 of length 1 for a Box; a plain int is accepted too).
func (s *spec) action(v any) (float64, error) {
	if s.discrete > 0 {
		switch x := v.(type) {
		case int64:
			return s.checkIntAction(x)
		case int:
			return s.checkIntAction(int64(x))
		default:
			return 0, fmt.Errorf("%s: action is a %T, want an int64 in [0, %d)", s.id, v, s.discrete)
		}
	}
	x, ok := v.([]float64)
	if !ok || len(x) != 1 {
		return 0, fmt.Errorf("%s: action is a %T of %v, want a []float64 of one element in %v", s.id, v, v, s.act)
	}
	return s.checkFloatAction(x[0])
}

// Env is one copy of a classic-control environment, with its TimeLimit.
type Env struct {
	sp      *spec
	cfg     config
	sim     sim
	rng     nprand.Generator
	obs     []float64
	elapsed int
	started bool
	ended   bool
}

var _ envs.Env = (*Env)(nil)

// NewEnv builds one copy of id with make options (see the package doc).
func NewEnv(id string, options map[string]any) (*Env, error) {
	sp, err := lookup(id)
	if err != nil {
		return nil, err
	}
	cfg, err := sp.parseMake(options, false)
	if err != nil {
		return nil, err
	}
	return &Env{sp: sp, cfg: cfg, sim: sp.newSim(cfg), rng: nprand.Random(), obs: make([]float64, sp.obs.FlatSize())}, nil
}

// Reset starts an episode. A non-nil seed reseeds the generator as Gymnasium's reset(seed=...) does;
// nil keeps the stream.
func (e *Env) Reset(seed *int64, options map[string]any) (any, envs.Info, error) {
	b, err := e.sp.parseReset(options, nil)
	if err != nil {
		return nil, nil, err
	}
	if seed != nil {
		g, err := nprand.New(*seed)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: reset: %w", e.sp.id, err)
		}
		e.rng = g
	}
	e.sim.reset(&e.rng, b, e.obs)
	e.elapsed, e.started, e.ended = 0, true, false
	return append([]float64(nil), e.obs...), nil, nil
}

// Step applies one action; the step that reaches the TimeLimit returns truncated.
func (e *Env) Step(action any) (any, float64, bool, bool, envs.Info, error) {
	if !e.started {
		return nil, 0, false, false, nil, fmt.Errorf("%s: step before reset", e.sp.id)
	}
	if e.ended {
		return nil, 0, false, false, nil, fmt.Errorf("%s: step after the episode ended; call Reset", e.sp.id)
	}
	a, err := e.sp.action(action)
	if err != nil {
		return nil, 0, false, false, nil, err
	}
	r, term := e.sim.step(a, e.obs)
	e.elapsed++
	trunc := e.elapsed >= e.cfg.maxSteps
	e.ended = term || trunc
	return append([]float64(nil), e.obs...), r, term, trunc, nil, nil
}

func (e *Env) ActionSpace() envs.Space      { return e.sp.act }
func (e *Env) ObservationSpace() envs.Space { return e.sp.obs }
func (e *Env) Close() error                 { return nil }

// ID is the environment id.
func (e *Env) ID() string { return e.sp.id }

// MaxEpisodeSteps is the TimeLimit in force.
func (e *Env) MaxEpisodeSteps() int { return e.cfg.maxSteps }

// Elapsed is the number of steps of the current episode.
func (e *Env) Elapsed() int { return e.elapsed }
