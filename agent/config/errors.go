package config

import (
	"errors"
	"fmt"
	"strings"
)

// FieldError is an invalid value of one Config field. It names fields as config.json does (their
// JSON names), never by a command line's flags: a program with flags renders it with Text and its
// own names (cmd/pcl gives the flag of each field).
type FieldError struct {
	Field string // JSON name of the invalid field, e.g. "tsallis_q"
	Value any
	// Reason is what the value must be, a format whose %s verbs are the fields of Related.
	Reason  string
	Related []string // JSON names of the other fields Reason names
}

// Error names the fields by their JSON names.
func (e *FieldError) Error() string {
	return "config: " + e.Text(func(field string) string { return field })
}

// Text is the error's message, without the package prefix, with every field named by name.
func (e *FieldError) Text(name func(field string) string) string {
	related := make([]any, len(e.Related))
	for i, f := range e.Related {
		related[i] = name(f)
	}
	return fmt.Sprintf("%s = %v: %s", name(e.Field), e.Value, fmt.Sprintf(e.Reason, related...))
}

// FieldNamer is an error that names config fields: Error by their JSON names, Text by the names
// it is given (a program's flags). *FieldError is one; memory.LimitError another.
type FieldNamer interface {
	error
	Text(name func(field string) string) string
}

// Renamed is err's message with every FieldNamer in err's tree (through wrapping and
// errors.Join) naming fields by name.
func Renamed(err error, name func(field string) string) string {
	msg := err.Error()
	for _, e := range namers(err, nil) {
		msg = strings.ReplaceAll(msg, e.Error(), e.Text(name))
	}
	return msg
}

// namers appends the FieldNamers of err's tree to out.
func namers(err error, out []FieldNamer) []FieldNamer {
	switch e := err.(type) {
	case nil:
		return out
	case FieldNamer:
		return append(out, e)
	case interface{ Unwrap() []error }:
		for _, inner := range e.Unwrap() {
			out = namers(inner, out)
		}
		return out
	}
	return namers(errors.Unwrap(err), out)
}
