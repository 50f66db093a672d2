// Package analysis reads finished (or partial) runs through their run directories and reports on
// them: learning curves banded over seeds, the per-run summary table, paired comparisons against
// a baseline with t-intervals, the collapse flags, and the statistics and colours these share
// with the sweep reports of package evaluation.
package analysis
