package envs

import (
	"fmt"
	"slices"
	"strings"
)

// Factory builds one environment id, as a single Env and as a native VecEnv of n copies.
type Factory struct {
	// Make builds one copy. Required.
	Make func(options map[string]any) (Env, error)
	// MakeVec builds n copies stepped as one batch. Optional: without it MakeVec is an error.
	MakeVec func(n int, options map[string]any) (VecEnv, error)
	// Summary is a one-line description for listings.
	Summary string
}

// Registry maps environment ids to factories. It is a plain value with no global state: build one
// with NewRegistry and Register what you need (envs/registry.Default returns one holding every
// Go-native id).
type Registry struct {
	factories map[string]Factory
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry { return &Registry{factories: map[string]Factory{}} }

// Register adds id. Registering an id twice, an empty id or a factory without Make is an error.
func (r *Registry) Register(id string, f Factory) error {
	if strings.TrimSpace(id) == "" {
		return fmt.Errorf("envs: register: empty id")
	}
	if f.Make == nil {
		return fmt.Errorf("envs: register %q: factory has no Make", id)
	}
	if r.factories == nil {
		r.factories = map[string]Factory{}
	}
	if _, dup := r.factories[id]; dup {
		return fmt.Errorf("envs: register %q: id already registered", id)
	}
	r.factories[id] = f
	return nil
}

// IDs returns the registered ids, sorted.
func (r *Registry) IDs() []string {
	ids := make([]string, 0, len(r.factories))
	for id := range r.factories {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// Lookup returns the factory of id, or an error listing the known ids.
func (r *Registry) Lookup(id string) (Factory, error) {
	f, ok := r.factories[id]
	if !ok {
		return Factory{}, fmt.Errorf("envs: unknown environment id %q (known: %s)", id, strings.Join(r.IDs(), ", "))
	}
	return f, nil
}

// Make builds one copy of id.
func (r *Registry) Make(id string, options map[string]any) (Env, error) {
	f, err := r.Lookup(id)
	if err != nil {
		return nil, err
	}
	env, err := f.Make(options)
	if err != nil {
		return nil, fmt.Errorf("envs: make %q: %w", id, err)
	}
	return env, nil
}

// MakeVec builds n copies of id as one VecEnv.
func (r *Registry) MakeVec(id string, n int, options map[string]any) (VecEnv, error) {
	f, err := r.Lookup(id)
	if err != nil {
		return nil, err
	}
	if n < 1 {
		return nil, fmt.Errorf("envs: make %q: %d copies, want >= 1", id, n)
	}
	if f.MakeVec == nil {
		return nil, fmt.Errorf("envs: make %q: no vectorised version registered", id)
	}
	venv, err := f.MakeVec(n, options)
	if err != nil {
		return nil, fmt.Errorf("envs: make %q x%d: %w", id, n, err)
	}
	return venv, nil
}
