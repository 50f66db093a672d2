package envs

import (
	"fmt"
	"maps"
)

// VecRequest names a VecEnv for an env factory to make: what a consumer (the trainer) asks for,
// without knowing whether the copies will be Go-native or served by another process.
type VecRequest struct {
	// ID is the env id: a registry id, or for a factory that reaches Gymnasium any registered id.
	ID string
	// Copies is the number of copies stepped as one batch (>= 1).
	Copies int
	// Autoreset is the VecEnv's autoreset mode.
	Autoreset AutoresetMode
	// Options are the registry options of a Go-native env (e.g. the algorithmic tasks' "base"),
	// without "autoreset", which Autoreset sets. An env served through the bridge does not get them.
	Options map[string]any
}

// MakeRequest makes the VecEnv req names from the registry: req.Options with the autoreset mode.
func (r *Registry) MakeRequest(req VecRequest) (VecEnv, error) {
	if _, ok := req.Options["autoreset"]; ok {
		return nil, fmt.Errorf("envs: make %q: the autoreset mode goes in VecRequest.Autoreset, not in its options", req.ID)
	}
	opts := maps.Clone(req.Options)
	if opts == nil {
		opts = map[string]any{}
	}
	opts["autoreset"] = req.Autoreset
	return r.MakeVec(req.ID, req.Copies, opts)
}
