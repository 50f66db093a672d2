package analysis

import (
	"fmt"
	"strings"

	"github.com/sparsepcl/sparsepcl/agent/train"
)

// CollapseSection is a report section with, for each run, the collapse warning that `pcl train`'s
// check gives over its metrics (train.CollapseOf), or that it gives none: the check as it is now,
// so runs trained before it changed are judged alike.
func CollapseSection(runs []Record) (string, error) {
	var b strings.Builder
	b.WriteString("\n## Collapse warnings\n\nThe check `pcl train` runs (a policy on one action for a twentieth of the run while its return " +
		"does not improve, before it learned or after losing more than half of what it learned), replayed over each run's metrics:\n\n")
	for _, r := range runs {
		w, it, ok, err := train.CollapseOf(r.Cfg, r.Rows)
		if err != nil {
			return "", fmt.Errorf("experiment: %s: %w", r.Dir, err)
		}
		if !ok {
			fmt.Fprintf(&b, "- `%s`: none\n", r.Dir)
			continue
		}
		fmt.Fprintf(&b, "- `%s`: at iteration %d, %s\n", r.Dir, it, w)
	}
	return b.String(), nil
}
