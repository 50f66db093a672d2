package train

import (
	"github.com/sparsepcl/sparsepcl/internal/provenance"
)

// ProvenanceFile is the run directory's record of what produced the run: one session per process
// that trained it (git commit and dirty flag, Go version, BLAS, host, cores, env server versions).
const ProvenanceFile = provenance.FileName

// EnvServerInfo is implemented by an EnvMaker whose envs another program serves (the bridge's
// Python server): the versions that program reports (gymnasium, mujoco, numpy, ...), recorded in
// run.json. Nil for envs made in this process.
type EnvServerInfo interface {
	EnvServerVersions() map[string]string
}

// writeProvenance appends this process's session, starting at iteration from, to the run
// directory's run.json. The env server's versions come from opts.Envs once it has made the envs.
func writeProvenance(opts Options, from int) error {
	if opts.session == nil {
		return nil
	}
	s := *opts.session
	s.FromIteration = from
	if info, ok := opts.Envs.(EnvServerInfo); ok {
		s.EnvServer = info.EnvServerVersions()
	}
	return provenance.Append(opts.Dir, s)
}
