// Package lstm is the model of the algorithmic tasks: one recurrent policy and value network over
// whole episodes, as the paper's reference code builds it (the observation and the previous
// action's components embedded and summed, an LSTM, and linear heads in pcl.Heads' layout).
//
// Model is the network as the PCL learner sees it (a pcl.Network over episodes), Learner the one
// PCL learner over it, Actor the model acting in env copies one step at a time with each copy's
// recurrent state (a collect.Actor), TokenEncoder the observation's token (a collect.Encoder),
// and Spec the task's observation vocabulary and action components the network is sized from.
package lstm
