//go:build !unix

package train

import "os"

// lockRunDir does nothing where flock is missing: two processes given one run directory there are
// not kept apart.
func lockRunDir(string) (*os.File, error) { return nil, nil }

// InUse is always false where runs cannot lock their directories.
func InUse(string) bool { return false }
