// Package mlp is the model of continuous control (HalfCheetah with a discretised action grid, or
// any Gymnasium env through the bridge): the paper's separate feed-forward policy and value
// networks, two tanh layers each, reading a flat observation vector, over sub-episodes.
//
// Model is the network as the PCL learner sees it (a pcl.Network over segments, and a
// pcl.FusedNetwork) and as the collector sees it (a stateless collect.Actor); Learner is the one
// PCL learner over it. NewEncoder flattens an observation space into the network's input (a Box
// as it is, a Discrete one-hot, composites as gymnasium.spaces.flatten does) and Normalizer
// keeps the running statistics that normalise it. AdaptActions gives the env the Discrete action
// space the policy needs (a Box discretised into a grid), EnvAction maps an index back to the
// env's action, and Record plays a greedy episode as the env saw it. A segment cut by the
// iteration or by a time limit bootstraps from V at its last state, a terminated one does not.
package mlp
