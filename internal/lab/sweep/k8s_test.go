package sweep

import (
	"strings"
	"testing"
)

func TestJobName(t *testing.T) {
	for _, c := range []struct{ dir, want string }{
		{"sweeps/fig1", "pcl-fig1"},
		{"/data/sweeps/Fig_1.v2/", "pcl-fig-1-v2"},
		{"sweeps/--x--", "pcl-x"},
		{"sweeps/" + strings.Repeat("a", 80), "pcl-" + strings.Repeat("a", 59)},
	} {
		if got := JobName(c.dir); got != c.want {
			t.Errorf("JobName(%q) = %q, want %q", c.dir, got, c.want)
		}
		if !dnsLabel.MatchString(JobName(c.dir)) {
			t.Errorf("JobName(%q) = %q is not a DNS-1123 label", c.dir, JobName(c.dir))
		}
	}
}

func TestPodDir(t *testing.T) {
	for _, c := range []struct{ dir, mount, want, err string }{
		{"sweeps/fig1", "/data", "/data/sweeps/fig1", ""},
		{"./sweeps/fig1/", "/data/", "/data/sweeps/fig1", ""},
		{"/data/sweeps/fig1", "/data", "/data/sweeps/fig1", ""},
		{"/data", "/data", "/data", ""},
		{"/database/fig1", "/data", "", "not under the volume's mount path /data"},
		{"../fig1", "/data", "", "leaves the volume"},
		{"sweeps/fig1", "data", "", "not absolute"},
	} {
		got, err := PodDir(c.dir, c.mount)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("PodDir(%q, %q) = %q, %v; want an error with %q", c.dir, c.mount, got, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("PodDir(%q, %q) = %q, %v; want %q", c.dir, c.mount, got, err, c.want)
		}
	}
}

// IndexedJob refuses what Kubernetes would refuse, or what would not find the sweep.
func TestIndexedJobErrors(t *testing.T) {
	good := JobOptions{Name: "pcl-fig1", Image: "sparsepcl:latest", PodDir: "/data/sweeps/fig1", Claim: "pcl-data", Mount: "/data",
		Parallelism: 5, BackoffPerIndex: 3, Memory: "1Gi"}
	m := Manifest{Version: version, Runs: []Run{{Index: 0, ID: "a"}, {Index: 1, ID: "b"}}}
	if _, err := IndexedJob(m, good); err != nil {
		t.Fatalf("good options: %v", err)
	}
	for _, c := range []struct {
		name string
		edit func(*JobOptions)
		err  string
	}{
		{"upper-case name", func(o *JobOptions) { o.Name = "PCL" }, "not a DNS-1123 label"},
		{"long name", func(o *JobOptions) { o.Name = strings.Repeat("a", 64) }, "not a DNS-1123 label"},
		{"no image", func(o *JobOptions) { o.Image = "" }, "no container image"},
		{"relative pod dir", func(o *JobOptions) { o.PodDir = "sweeps/fig1" }, "not absolute"},
		{"pod dir off the volume", func(o *JobOptions) { o.PodDir = "/scratch/fig1" }, "not on the volume mounted at /data"},
		{"bad claim", func(o *JobOptions) { o.Claim = "PCL data" }, "claim name"},
		{"no parallelism", func(o *JobOptions) { o.Parallelism = 0 }, "parallelism 0"},
		{"negative retries", func(o *JobOptions) { o.BackoffPerIndex = -1 }, "retries per index"},
		{"bad memory", func(o *JobOptions) { o.Memory = "1 GB" }, "not a Kubernetes quantity"},
	} {
		o := good
		c.edit(&o)
		if _, err := IndexedJob(m, o); err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("%s: %v, want an error with %q", c.name, err, c.err)
		}
	}
	if _, err := IndexedJob(Manifest{Version: version}, good); err == nil {
		t.Error("a manifest without runs: no error")
	}
}
