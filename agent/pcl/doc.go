// Package pcl implements path consistency learning: the d-step path-consistency loss on per-step
// arrays (PathLoss), the per-step consistency terms of soft, sparse and general-Tsallis PCL computed
// from network heads, and the learner that ties a sequence network to them.
package pcl
