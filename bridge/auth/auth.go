// Package auth holds the credentials of the bridge's ZeroMQ PLAIN authentication: the file they
// live in (JSON {"user": ..., "password": ...}, readable only by its owner), reading it with that
// check, and making a fresh one. The same file is given to the env servers (python -m
// python_server --auth-file FILE) and to the client that dials them (bridge.Config.Credentials).
//
// PLAIN sends the user and password in clear and encrypts nothing: it keeps out whoever does not
// hold the file, not whoever can read the traffic. Across an untrusted network, tunnel the bridge
// (SSH, a VPN); see docs/bridge.md.
package auth

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// EnvVar names the credential file when no --auth-file flag is given.
const EnvVar = "SPARSEPCL_AUTH_FILE"

// maxField is the longest user or password PLAIN can carry (each goes with a one-byte length).
const maxField = 255

// maxFile bounds what Load reads.
const maxFile = 16 << 10

// ErrInsecureFile marks a credential file that others than its owner may read or write, or that
// belongs to another user.
var ErrInsecureFile = errors.New("auth file is not private to this user")

// Credentials are a PLAIN user and password. They print without the password.
type Credentials struct {
	User     string `json:"user"`
	Password string `json:"password"`
}

// String names the user and hides the password, so that credentials put in a log or an error by
// mistake give nothing away.
func (c Credentials) String() string { return fmt.Sprintf("user %q (password hidden)", c.User) }

// GoString is String: %#v hides the password too.
func (c Credentials) GoString() string { return c.String() }

// check says what is wrong with c, if anything.
func (c Credentials) check() error {
	for _, f := range []struct{ name, v string }{{"user", c.User}, {"password", c.Password}} {
		if len(f.v) < 1 || len(f.v) > maxField {
			return fmt.Errorf("%q must be 1 to %d bytes, is %d", f.name, maxField, len(f.v))
		}
	}
	return nil
}

// Load reads the credential file at path. It refuses a file that is not a regular file owned by
// this user with no permission for group or others (mode 0600 or 0400), wrapping ErrInsecureFile.
func Load(path string) (Credentials, error) {
	f, err := os.Open(path)
	if err != nil {
		return Credentials{}, fmt.Errorf("auth file: %w", err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return Credentials{}, fmt.Errorf("auth file: %w", err)
	}
	if err := private(path, info); err != nil {
		return Credentials{}, err
	}
	raw, err := io.ReadAll(io.LimitReader(f, maxFile))
	if err != nil {
		return Credentials{}, fmt.Errorf("auth file %s: %w", path, err)
	}
	var c Credentials
	if err := json.Unmarshal(raw, &c); err != nil {
		return Credentials{}, fmt.Errorf("auth file %s: not a credential file (make one with `pcl auth new FILE`): %w", path, err)
	}
	if err := c.check(); err != nil {
		return Credentials{}, fmt.Errorf("auth file %s: %w", path, err)
	}
	return c, nil
}

// private refuses a file that is not a regular file of this user's, closed to group and others.
func private(path string, info fs.FileInfo) error {
	if !info.Mode().IsRegular() {
		return fmt.Errorf("auth file %s: not a regular file", path)
	}
	if uid, ok := owner(info); ok && uid != os.Getuid() {
		return fmt.Errorf("%w: %s belongs to uid %d, not to this user (uid %d)", ErrInsecureFile, path, uid, os.Getuid())
	}
	if perm := info.Mode().Perm(); perm&0o077 != 0 {
		return fmt.Errorf("%w: %s has mode %04o, open to group or others, and it holds a password; run chmod 600 %s", ErrInsecureFile, path, perm, path)
	}
	return nil
}

// New makes a credential file at path with a random user and password, mode 0600. It refuses to
// overwrite anything already there.
func New(path string) (Credentials, error) {
	c, err := Random()
	if err != nil {
		return Credentials{}, err
	}
	raw, err := json.Marshal(c)
	if err != nil {
		return Credentials{}, fmt.Errorf("auth: encode: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		if errors.Is(err, fs.ErrExist) {
			return Credentials{}, fmt.Errorf("auth: %s exists already; not overwriting it (remove it first to replace it)", path)
		}
		return Credentials{}, fmt.Errorf("auth: new credential file: %w", err)
	}
	if _, err := f.Write(append(raw, '\n')); err != nil {
		f.Close()
		os.Remove(path)
		return Credentials{}, fmt.Errorf("auth: write %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		os.Remove(path)
		return Credentials{}, fmt.Errorf("auth: write %s: %w", path, err)
	}
	return c, nil
}

// Random returns a fresh user ("sparsepcl-" and 8 hex digits) and password (32 random bytes in
// base64url, 256 bits).
func Random() (Credentials, error) {
	var u [4]byte
	var p [32]byte
	if _, err := rand.Read(u[:]); err != nil {
		return Credentials{}, fmt.Errorf("auth: random user: %w", err)
	}
	if _, err := rand.Read(p[:]); err != nil {
		return Credentials{}, fmt.Errorf("auth: random password: %w", err)
	}
	return Credentials{User: "sparsepcl-" + hex.EncodeToString(u[:]), Password: base64.RawURLEncoding.EncodeToString(p[:])}, nil
}
