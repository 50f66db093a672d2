// Package cputime reads the CPU time this process has used, for benchmarks that report CPU time
// beside wall time: on a shared machine the wall time of a measurement moves with the load, its
// CPU time much less.
package cputime
