// Package procmem reads the resident memory of this process and of its child processes from
// Linux's /proc: the current resident set (VmRSS) and its peak (VmHWM). Long runs log it to show
// that memory stays flat once the replay has filled (the soak check).
package procmem

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Usage is one process's resident memory in bytes.
type Usage struct {
	PID       int
	Name      string
	RSS, Peak int64
}

// Read returns the usage of process pid from root (normally "/proc").
func Read(root string, pid int) (Usage, error) {
	path := filepath.Join(root, strconv.Itoa(pid), "status")
	data, err := os.ReadFile(path)
	if err != nil {
		return Usage{}, fmt.Errorf("procmem: %w", err)
	}
	u := Usage{PID: pid}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		key, val, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		val = strings.TrimSpace(val)
		switch key {
		case "Name":
			u.Name = val
		case "VmRSS", "VmHWM":
			kb, err := strconv.ParseInt(strings.TrimSuffix(val, " kB"), 10, 64)
			if err != nil {
				return Usage{}, fmt.Errorf("procmem: %s: %s %q: %w", path, key, val, err)
			}
			if key == "VmRSS" {
				u.RSS = kb << 10
			} else {
				u.Peak = kb << 10
			}
		}
	}
	return u, nil
}

// Children returns the usage of every process whose parent is pid, in /proc order. Processes
// that end while being read are skipped.
func Children(root string, pid int) ([]Usage, error) {
	entries, err := os.ReadDir(root)
	if err != nil {
		return nil, fmt.Errorf("procmem: %w", err)
	}
	var out []Usage
	for _, e := range entries {
		child, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join(root, e.Name(), "stat"))
		if err != nil {
			continue
		}
		// stat is "pid (comm) state ppid ...": comm may hold spaces and parentheses, so the
		// fields start after the last ')'.
		i := bytes.LastIndexByte(stat, ')')
		if i < 0 {
			continue
		}
		fields := strings.Fields(string(stat[i+1:]))
		if len(fields) < 2 {
			continue
		}
		if ppid, err := strconv.Atoi(fields[1]); err != nil || ppid != pid {
			continue
		}
		u, err := Read(root, child)
		if err != nil {
			continue
		}
		out = append(out, u)
	}
	return out, nil
}
