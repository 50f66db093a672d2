// Package control trains PCL on long-episode environments, the paper's continuous-control setting
// (HalfCheetah with a discretised action grid, or any Gymnasium env through the bridge): copies
// are not reset per iteration; each iteration takes S steps per copy from where the copies stand,
// the pieces go into a step replay as sub-episodes, and gradient steps are taken on batches of
// sub-episodes sampled by exponentiated recency.
//
// The network family here is the paper's: separate feed-forward policy and value networks, two
// tanh layers each, reading a flat observation vector (a Box, or a one-hot Discrete), optionally
// normalised by running statistics. MLP is this family's pcl.Network, and Learner is the one PCL
// learner (pcl.Learner) over it: the loss is the same path-consistency objective as the
// algorithmic tasks' (pcl.Objective); a piece cut by the iteration or by a time limit bootstraps
// from V at its last state, a terminated one does not. The model acts in the env copies as a
// collect.Actor: agent/collect's one collector samples it and plays its greedy episodes.
package control
