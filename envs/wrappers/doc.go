// Package wrappers adapts environments to what a learner over one Discrete action space needs:
// a Tuple of Discretes combined into one Discrete (mixed radix, first component least significant),
// a Box discretised into a grid of k points per dimension (first dimension least significant), and
// a time limit that truncates. Each mapping works both ways (index -> action and action -> index).
package wrappers
