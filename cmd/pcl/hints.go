package main

import (
	"errors"

	"github.com/sparsepcl/sparsepcl/internal/envmaker"
)

// hint is what a user can do about err, in terms of this repository's commands ("" when nothing
// specific): the libraries' errors name causes, not commands.
func hint(err error) string {
	switch {
	case errors.Is(err, envmaker.ErrNoPython):
		return "install the env server's Python environment with `bash scripts/setup` (or point SPARSEPCL_PYTHON at a Python that has requirements.txt installed)"
	}
	return ""
}
