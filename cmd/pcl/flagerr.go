package main

import (
	"errors"
	"strings"

	"github.com/sparsepcl/sparsepcl/agent/config"
	"github.com/sparsepcl/sparsepcl/agent/train"
)

// fieldNamer is a library error that names config fields (config.FieldError, train.MemoryError):
// Error names them by JSON name, Text by the names it is given.
type fieldNamer interface {
	error
	Text(name func(field string) string) string
}

// flagText is err's message with every config.FieldError (every fieldNamer) in it naming flags
// instead of config fields ("--tsallis-q = 1: must be > 1 (q = 1 is soft PCL: use --algo soft)" for the library's
// "config: tsallis_q = 1: ... use algo soft"), for errors in a config the command line built. A
// field without a flag keeps its JSON name; train.MemoryError's limit is --max-memory.
func flagText(err error) string {
	msg := err.Error()
	fes := fieldNamers(err, nil)
	if len(fes) == 0 {
		return msg
	}
	flags := config.FieldFlags()
	name := func(field string) string {
		if f, ok := flags[field]; ok {
			return "--" + f
		}
		if field == train.MaxMemoryField {
			return "--max-memory"
		}
		return field
	}
	for _, fe := range fes {
		msg = strings.ReplaceAll(msg, fe.Error(), fe.Text(name))
	}
	return msg
}

// fieldNamers appends the fieldNamers in err's tree (through wrapping and errors.Join).
func fieldNamers(err error, out []fieldNamer) []fieldNamer {
	switch e := err.(type) {
	case nil:
		return out
	case fieldNamer:
		return append(out, e)
	case interface{ Unwrap() []error }:
		for _, inner := range e.Unwrap() {
			out = fieldNamers(inner, out)
		}
		return out
	}
	return fieldNamers(errors.Unwrap(err), out)
}

// flagError is an error of a config the command line built, its message naming flags (flagText).
type flagError struct{ err error }

func (e flagError) Error() string { return flagText(e.err) }
func (e flagError) Unwrap() error { return e.err }
