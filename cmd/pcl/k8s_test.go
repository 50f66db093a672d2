package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/sparsepcl/sparsepcl/bridge"
)

// k8sValidate reads YAML documents on stdin, checks each against the strict Kubernetes JSON
// schemas (unknown fields refused) of every version in argv with kubernetes-validate, and prints
// them as a JSON list.
const k8sValidate = `
import json, sys, yaml, kubernetes_validate
docs = [d for d in yaml.safe_load_all(sys.stdin) if d is not None]
for d in docs:
    for v in sys.argv[1:]:
        try:
            kubernetes_validate.validate(d, v, strict=True)
        except kubernetes_validate.ValidationError as e:
            sys.exit("Kubernetes %s schema: %s at %s" % (v, e.message, "/".join(map(str, e.absolute_path))))
json.dump(docs, sys.stdout)
`

// k8sVersions are the Kubernetes versions the Job is checked against: the first whose Job has
// backoffLimitPerIndex on by default, and the newest kubernetes-validate knows.
var k8sVersions = []string{"1.29.0", "1.37.0"}

// k8sPython is the project's Python with kubernetes-validate (requirements.txt). Without it the
// test is skipped, and under CI=true it fails.
func k8sPython(t *testing.T) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	root, err := bridge.FindRoot()
	if err != nil {
		t.Fatal(err)
	}
	python := bridge.FindPython(root)
	if out, err := exec.CommandContext(ctx, python, "-c", "import kubernetes_validate, yaml").CombinedOutput(); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("kubernetes-validate required under CI=true (scripts/setup installs requirements.txt): %s: %v\n%s", python, err, out)
		}
		t.Skipf("no kubernetes-validate in %s (run scripts/setup): %v", python, err)
	}
	return python
}

// validateK8s checks YAML against the Job schema with kubernetes-validate in python, and returns
// the documents it holds.
func validateK8s(t *testing.T, python string, yaml []byte) []map[string]any {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, python, append([]string{"-c", k8sValidate}, k8sVersions...)...)
	cmd.Stdin = bytes.NewReader(yaml)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("the Job fails the schema: %v\n%s\n%s", err, errb.String(), yaml)
	}
	var docs []map[string]any
	if err := json.Unmarshal(out.Bytes(), &docs); err != nil {
		t.Fatalf("validator output: %v\n%s", err, out.String())
	}
	return docs
}

// at returns the value at a path of map keys and list indices in a decoded JSON document.
func at(doc any, keys ...any) any {
	for _, k := range keys {
		switch k := k.(type) {
		case string:
			m, _ := doc.(map[string]any)
			doc = m[k]
		case int:
			l, _ := doc.([]any)
			if k >= len(l) {
				return nil
			}
			doc = l[k]
		}
	}
	return doc
}

// pcl sweep k8s writes an Indexed Job that passes Kubernetes's strict Job schema and runs the
// manifest: one completion per run, the index from JOB_COMPLETION_INDEX (no --index in the
// command), the sweep directory on the mounted claim, restartPolicy Never, retries per index.
func TestSweepK8sJob(t *testing.T) {
	for _, k := range []string{"SLURM_ARRAY_TASK_ID", "JOB_COMPLETION_INDEX"} { // as if not under a scheduler
		t.Setenv(k, "")
	}
	python := k8sPython(t)
	work := t.TempDir()
	t.Chdir(work)
	dir := filepath.Join("sweeps", "fig1")
	if out, err := runPCL(t, append([]string{"sweep", "plan", "--out", dir, "--iters", "2"}, tinySweep...)...); err != nil {
		t.Fatalf("plan: %s", out)
	}
	cases := []struct {
		name        string
		args        []string
		job, podDir string
		mount       string
		parallelism float64
	}{
		{"defaults", []string{"--dir", dir, "--image", "sparsepcl:latest"}, "pcl-fig1", "/data/sweeps/fig1", "/data", 2},
		{"absolute dir under the mount", []string{"--dir", filepath.Join(work, dir), "--image", "registry.example/pcl:v1", "--mount", work,
			"--parallelism", "1", "--name", "fig-one", "--claim", "shared", "--memory", "512Mi", "--backoff-per-index", "0"},
			"fig-one", filepath.ToSlash(filepath.Join(work, dir)), work, 1},
		{"pod dir given", []string{"--dir", dir, "--image", "pcl", "--pod-dir", "/mnt/pcl/fig1", "--mount", "/mnt/pcl"}, "pcl-fig1", "/mnt/pcl/fig1", "/mnt/pcl", 2},
	}
	var all bytes.Buffer
	for _, c := range cases {
		var o, e bytes.Buffer
		if code := runMain(context.Background(), append([]string{"sweep", "k8s"}, c.args...), &o, &e); code != 0 {
			t.Fatalf("%s: exit %d: %s", c.name, code, e.String())
		}
		all.WriteString("---\n")
		all.Write(o.Bytes())
	}
	docs := validateK8s(t, python, all.Bytes())
	if len(docs) != len(cases) {
		t.Fatalf("%d documents, want %d", len(docs), len(cases))
	}
	for i, c := range cases {
		d := docs[i]
		pod := at(d, "spec", "template", "spec")
		ctr := at(pod, "containers", 0)
		for _, f := range []struct {
			what      string
			got, want any
		}{
			{"kind", at(d, "kind"), "Job"},
			{"apiVersion", at(d, "apiVersion"), "batch/v1"},
			{"name", at(d, "metadata", "name"), c.job},
			{"completionMode", at(d, "spec", "completionMode"), "Indexed"},
			{"completions (the manifest's runs)", at(d, "spec", "completions"), 2.0},
			{"parallelism", at(d, "spec", "parallelism"), c.parallelism},
			{"restartPolicy", at(pod, "restartPolicy"), "Never"},
			{"command", at(ctr, "command"), []any{"pcl", "sweep", "run", "--dir", c.podDir}},
			{"volume mount", at(ctr, "volumeMounts", 0, "mountPath"), c.mount},
			{"mounted volume", at(ctr, "volumeMounts", 0, "name"), at(pod, "volumes", 0, "name")},
			{"env", at(ctr, "env"), []any{map[string]any{"name": "GOMAXPROCS", "value": "1"}, map[string]any{"name": "OPENBLAS_NUM_THREADS", "value": "1"}}},
			{"cpu request", at(ctr, "resources", "requests", "cpu"), "1"},
			{"disruptions ignored", at(d, "spec", "podFailurePolicy", "rules", 0, "onPodConditions", 0, "type"), "DisruptionTarget"},
		} {
			if !reflect.DeepEqual(f.got, f.want) {
				t.Errorf("%s: %s = %#v, want %#v", c.name, f.what, f.got, f.want)
			}
		}
		if at(d, "spec", "backoffLimitPerIndex") == nil {
			t.Errorf("%s: no backoffLimitPerIndex", c.name)
		}
		if at(pod, "volumes", 0, "persistentVolumeClaim", "claimName") == nil {
			t.Errorf("%s: the volume is not a claim", c.name)
		}
	}
	if got := at(docs[1], "spec", "template", "spec", "volumes", 0, "persistentVolumeClaim", "claimName"); got != "shared" {
		t.Errorf("--claim shared: claimName %v", got)
	}
	if got := at(docs[1], "spec", "backoffLimitPerIndex"); got != 0.0 {
		t.Errorf("--backoff-per-index 0: %v", got)
	}

	// The pods' command runs the run whose index Kubernetes gives it.
	t.Setenv("JOB_COMPLETION_INDEX", "1")
	out, err := runPCL(t, "sweep", "run", "--dir", dir)
	if err != nil || !strings.Contains(out, "sweep: run 1 (") {
		t.Errorf("pcl sweep run with JOB_COMPLETION_INDEX=1: %s", out)
	}

	for _, c := range []struct {
		args []string
		msg  string
	}{
		{[]string{"--image", "x"}, "--dir is required"},
		{[]string{"--dir", dir}, "--image is required"},
		{[]string{"--dir", "/elsewhere/fig1", "--image", "x"}, "plan the sweep first"},
		{[]string{"--dir", filepath.Join(work, dir), "--image", "x"}, "not under the volume's mount path /data"},
		{[]string{"--dir", dir, "--image", "x", "--name", "Fig1"}, "not a DNS-1123 label"},
		{[]string{"--dir", dir, "--image", "x", "--pod-dir", "/scratch/fig1"}, "not on the volume mounted at /data"},
	} {
		out, err := runPCL(t, append([]string{"sweep", "k8s"}, c.args...)...)
		if err == nil || !strings.Contains(out, c.msg) {
			t.Errorf("pcl sweep k8s %s: %q, want a failure containing %q", strings.Join(c.args, " "), out, c.msg)
		}
	}
}

// Every Job that README.md or docs/ show passes the same schema.
func TestDocumentedK8sJobsValidate(t *testing.T) {
	var jobs bytes.Buffer
	n := 0
	for _, f := range docFiles() {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for _, block := range fencedBlocks(string(b), "yaml") {
			if strings.Contains(block, "kind: Job") {
				jobs.WriteString("---\n" + block)
				n++
			}
		}
	}
	if n == 0 {
		t.Skip("README.md and docs/ show no Kubernetes Job")
	}
	if docs := validateK8s(t, k8sPython(t), jobs.Bytes()); len(docs) != n {
		t.Errorf("%d documents, want %d", len(docs), n)
	}
}
