package sweep

import (
	"encoding/json"
	"flag"
	"fmt"
	"path"
	"path/filepath"
	"regexp"
	"strings"
)

// JobOptions describe the Kubernetes Indexed Job that runs a sweep: one pod per run index, which
// `pcl sweep run` reads from JOB_COMPLETION_INDEX, the sweep directory on a shared volume.
type JobOptions struct {
	Name            string // the Job's name, a DNS-1123 label
	Image           string // a container image with pcl on its PATH
	PodDir          string // the sweep directory as the pods see it
	Claim           string // the PersistentVolumeClaim that holds the sweep directory
	Mount           string // where the claim is mounted in the pods
	Parallelism     int    // pods at once
	BackoffPerIndex int    // retries of a run whose pod fails (it resumes from its checkpoint)
	Memory          string // memory request of each pod (a Kubernetes quantity: 1Gi)
}

// RegisterFlags registers the options as the flags of pcl sweep k8s, with their defaults.
func (o *JobOptions) RegisterFlags(fs *flag.FlagSet) {
	fs.StringVar(&o.Image, "image", "", "container image with pcl on its PATH")
	fs.StringVar(&o.Name, "name", "", "the Job's name (default pcl-<the sweep directory's name>)")
	fs.StringVar(&o.Claim, "claim", "pcl-data", "PersistentVolumeClaim that holds the sweep directory")
	fs.StringVar(&o.Mount, "mount", "/data", "where the claim is mounted in the pods")
	fs.StringVar(&o.PodDir, "pod-dir", "", "the sweep directory in the pods (default <mount>/<dir> for a relative --dir, --dir itself for an absolute one under --mount)")
	fs.IntVar(&o.Parallelism, "parallelism", 50, "pods at once (at most the number of runs)")
	fs.IntVar(&o.BackoffPerIndex, "backoff-per-index", 3, "retries of a run whose pod fails; it resumes from its checkpoint")
	fs.StringVar(&o.Memory, "memory", "1Gi", "memory request of each pod, a Kubernetes `quantity`")
}

// Defaults fills in what was left empty for the sweep in dir: the name (JobName) and the
// directory in the pods (PodDir under the mount).
func (o *JobOptions) Defaults(dir string) error {
	if o.Name == "" {
		o.Name = JobName(dir)
	}
	if o.PodDir == "" {
		var err error
		if o.PodDir, err = PodDir(dir, o.Mount); err != nil {
			return err
		}
	}
	return nil
}

var (
	dnsLabel = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)
	quantity = regexp.MustCompile(`^[0-9]+(\.[0-9]+)?(Ki|Mi|Gi|Ti|Pi|Ei|k|M|G|T|P|E)?$`)
	notLabel = regexp.MustCompile(`[^a-z0-9-]+`)
)

// JobName is the default name of a sweep's Job: "pcl-" and the sweep directory's base name,
// lower-cased, with what a DNS-1123 label does not allow replaced by dashes.
func JobName(dir string) string {
	base := notLabel.ReplaceAllString(strings.ToLower(filepath.Base(filepath.Clean(dir))), "-")
	name := strings.Trim("pcl-"+strings.Trim(base, "-"), "-")
	if len(name) > 63 {
		name = strings.TrimRight(name[:63], "-")
	}
	return name
}

// PodDir is where the pods find the sweep directory dir when the volume is mounted at mount: a
// relative dir is taken relative to the volume's root (<mount>/<dir>); an absolute one must lie
// under mount (the volume mounted at the same place as here).
func PodDir(dir, mount string) (string, error) {
	if !path.IsAbs(mount) {
		return "", fmt.Errorf("sweep: the mount path %q is not absolute", mount)
	}
	d := filepath.ToSlash(dir)
	if !path.IsAbs(d) {
		if c := path.Clean(d); c == ".." || strings.HasPrefix(c, "../") {
			return "", fmt.Errorf("sweep: %s leaves the volume mounted at %s; give the directory in the pods with --pod-dir", dir, mount)
		}
		return path.Join(mount, d), nil
	}
	if !under(d, mount) {
		return "", fmt.Errorf("sweep: %s is not under the volume's mount path %s; give a directory relative to the volume, or the one in the pods with --pod-dir", dir, mount)
	}
	return path.Clean(d), nil
}

// under says whether the absolute slash path d is m or lies below it.
func under(d, m string) bool {
	d, m = path.Clean(d), path.Clean(m)
	return d == m || strings.HasPrefix(d, strings.TrimSuffix(m, "/")+"/")
}

// IndexedJob is the Kubernetes batch/v1 Job, as YAML, that runs every run of m: completion mode
// Indexed with one completion per run, each pod running `pcl sweep run --dir <PodDir>`
// single-threaded (GOMAXPROCS=1, OPENBLAS_NUM_THREADS=1, a request of one CPU), the claim mounted
// at Mount, restartPolicy Never and BackoffPerIndex retries per index (a pod evicted or preempted
// is replaced without using one up). A retried or replaced pod resumes its run from the last
// checkpoint, and one whose run is finished exits at once.
func IndexedJob(m Manifest, o JobOptions) ([]byte, error) {
	switch {
	case len(m.Runs) == 0:
		return nil, fmt.Errorf("sweep: the manifest has no runs")
	case !dnsLabel.MatchString(o.Name) || len(o.Name) > 63:
		return nil, fmt.Errorf("sweep: job name %q is not a DNS-1123 label (lower-case letters, digits and '-', at most 63)", o.Name)
	case o.Image == "":
		return nil, fmt.Errorf("sweep: no container image")
	case !path.IsAbs(o.PodDir):
		return nil, fmt.Errorf("sweep: the sweep directory in the pods, %q, is not absolute", o.PodDir)
	case !path.IsAbs(o.Mount):
		return nil, fmt.Errorf("sweep: the mount path %q is not absolute", o.Mount)
	case !under(o.PodDir, o.Mount):
		return nil, fmt.Errorf("sweep: the sweep directory in the pods, %s, is not on the volume mounted at %s", o.PodDir, o.Mount)
	case !dnsLabel.MatchString(o.Claim):
		return nil, fmt.Errorf("sweep: claim name %q is not a DNS-1123 name", o.Claim)
	case o.Parallelism < 1:
		return nil, fmt.Errorf("sweep: parallelism %d, want >= 1", o.Parallelism)
	case o.BackoffPerIndex < 0:
		return nil, fmt.Errorf("sweep: %d retries per index, want >= 0", o.BackoffPerIndex)
	case !quantity.MatchString(o.Memory):
		return nil, fmt.Errorf("sweep: memory %q is not a Kubernetes quantity (such as 512Mi or 2Gi)", o.Memory)
	}
	n := len(m.Runs)
	var b strings.Builder
	fmt.Fprintf(&b, "# The Kubernetes Indexed Job of the sweep in %s (%d runs), written by pcl sweep k8s:\n", o.PodDir, n)
	b.WriteString("# pod i runs `pcl sweep run`, which takes the run index i from JOB_COMPLETION_INDEX.\n")
	b.WriteString("apiVersion: batch/v1\nkind: Job\n")
	fmt.Fprintf(&b, "metadata: {name: %s}\n", q(o.Name))
	b.WriteString("spec:\n  completionMode: Indexed\n")
	fmt.Fprintf(&b, "  completions: %d  # the manifest's runs\n", n)
	fmt.Fprintf(&b, "  parallelism: %d\n", min(o.Parallelism, n))
	fmt.Fprintf(&b, "  backoffLimitPerIndex: %d  # a failed pod is retried; its run resumes from its checkpoint\n", o.BackoffPerIndex)
	b.WriteString("  podFailurePolicy:  # a pod evicted or preempted is replaced without using up a retry\n")
	b.WriteString("    rules: [{action: Ignore, onPodConditions: [{type: DisruptionTarget, status: \"True\"}]}]\n")
	b.WriteString("  template:\n    spec:\n      restartPolicy: Never\n      containers:\n      - name: pcl\n")
	fmt.Fprintf(&b, "        image: %s\n", q(o.Image))
	fmt.Fprintf(&b, "        command: [\"pcl\", \"sweep\", \"run\", \"--dir\", %s]\n", q(o.PodDir))
	b.WriteString("        env: [{name: GOMAXPROCS, value: \"1\"}, {name: OPENBLAS_NUM_THREADS, value: \"1\"}]\n")
	fmt.Fprintf(&b, "        resources: {requests: {cpu: \"1\", memory: %s}}\n", q(o.Memory))
	fmt.Fprintf(&b, "        volumeMounts: [{name: data, mountPath: %s}]\n", q(o.Mount))
	fmt.Fprintf(&b, "      volumes: [{name: data, persistentVolumeClaim: {claimName: %s}}]\n", q(o.Claim))
	return []byte(b.String()), nil
}

// q quotes s as a YAML double-quoted scalar (JSON's string escapes are YAML's too).
func q(s string) string {
	b, _ := json.Marshal(s) // a string always encodes
	return string(b)
}
