package auth

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLoad: a private file loads; one open to group or others, not a regular file, or malformed
// is refused with its cause.
func TestLoad(t *testing.T) {
	good := `{"user": "u", "password": "p4ss"}`
	tests := []struct {
		name     string
		body     string
		mode     os.FileMode
		dir      bool
		want     string // "" : loads
		insecure bool   // wraps ErrInsecureFile
	}{
		{"0600", good, 0o600, false, "", false},
		{"0400", good, 0o400, false, "", false},
		{"group-readable", good, 0o640, false, "mode 0640, open to group or others", true},
		{"world-readable", good, 0o604, false, "mode 0604, open to group or others", true},
		{"group-writable", good, 0o620, false, "chmod 600", true},
		{"a directory", "", 0o700, true, "not a regular file", false},
		{"not JSON", "user=u", 0o600, false, "not a credential file", false},
		{"no password", `{"user": "u"}`, 0o600, false, `"password" must be 1 to 255 bytes`, false},
		{"user too long", fmt.Sprintf(`{"user": %q, "password": "p"}`, strings.Repeat("u", 256)), 0o600, false, `"user" must be 1 to 255 bytes`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "auth.json")
			if tt.dir {
				if err := os.Mkdir(path, tt.mode); err != nil {
					t.Fatal(err)
				}
			} else if err := os.WriteFile(path, []byte(tt.body), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(path, tt.mode); err != nil {
				t.Fatal(err)
			}
			c, err := Load(path)
			if tt.want == "" {
				if err != nil || c.User != "u" || c.Password != "p4ss" {
					t.Fatalf("Load = %v, %v", c, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) || errors.Is(err, ErrInsecureFile) != tt.insecure {
				t.Fatalf("err = %v, want one saying %q (ErrInsecureFile: %v)", err, tt.want, tt.insecure)
			}
		})
	}
	if _, err := Load(filepath.Join(t.TempDir(), "none")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: err = %v", err)
	}
}

// TestNew: New makes a private file that Load reads back, different every time, and never
// overwrites.
func TestNew(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "auth.json")
	c, err := New(path)
	if err != nil {
		t.Fatal(err)
	}
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode().Perm() != 0o600 {
		t.Errorf("mode %04o, want 0600", info.Mode().Perm())
	}
	back, err := Load(path)
	if err != nil || back != c {
		t.Fatalf("Load = %v, %v; want %v", back, err, c)
	}
	if len(c.Password) < 40 || !strings.HasPrefix(c.User, "sparsepcl-") {
		t.Errorf("weak credentials: user %q, password of %d characters", c.User, len(c.Password))
	}
	if _, err := New(path); err == nil || !strings.Contains(err.Error(), "not overwriting") {
		t.Errorf("second New: err = %v", err)
	}
	again, err := Load(path)
	if err != nil || again != c {
		t.Errorf("the file changed: %v, %v", again, err)
	}
	other, err := New(filepath.Join(dir, "other.json"))
	if err != nil || other.Password == c.Password || other.User == c.User {
		t.Errorf("two files share credentials: %v, %v", other, err)
	}
}

// TestCredentialsHidePassword: printing credentials, by mistake, shows no password.
func TestCredentialsHidePassword(t *testing.T) {
	c := Credentials{User: "u", Password: "secret-password"}
	for _, s := range []string{fmt.Sprint(c), fmt.Sprintf("%v", &c), fmt.Sprintf("%+v", c), fmt.Sprintf("%#v", c)} {
		if strings.Contains(s, "secret") {
			t.Errorf("printed credentials show the password: %s", s)
		}
	}
}
