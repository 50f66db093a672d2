package config

import "fmt"

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
