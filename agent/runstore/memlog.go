package runstore

import (
	"fmt"
	"os"

	"github.com/sparsepcl/sparsepcl/agent/internal/procmem"
)

const memoryLogHeader = "iteration,env_steps,go_rss_mib,go_peak_mib,children,children_rss_mib,children_peak_mib\n"

// LogMemory appends one row to the run's memory.csv (creating it with its header): this process's
// resident memory and its children's. Where /proc cannot be read (not Linux) it does nothing.
func (d Dir) LogMemory(iteration int, envSteps int64) error {
	self, err := procmem.Read("/proc", os.Getpid())
	if err != nil {
		return nil // no /proc: nothing to log
	}
	kids, err := procmem.Children("/proc", os.Getpid())
	if err != nil {
		return nil
	}
	var rss, peak int64
	for _, k := range kids {
		rss, peak = rss+k.RSS, peak+k.Peak
	}
	path := d.File(MemoryLogFile)
	fh, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("memory log: %w", err)
	}
	defer fh.Close()
	if st, err := fh.Stat(); err == nil && st.Size() == 0 {
		if _, err := fh.WriteString(memoryLogHeader); err != nil {
			return fmt.Errorf("memory log: %w", err)
		}
	}
	mib := func(b int64) string { return fmt.Sprintf("%.1f", float64(b)/(1<<20)) }
	if _, err := fmt.Fprintf(fh, "%d,%d,%s,%s,%d,%s,%s\n", iteration, envSteps, mib(self.RSS), mib(self.Peak), len(kids), mib(rss), mib(peak)); err != nil {
		return fmt.Errorf("memory log: %w", err)
	}
	return nil
}
