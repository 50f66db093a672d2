// Package classic implements Gymnasium's classic-control environments natively in Go, identical to
// Gymnasium 1.x for the same seed: CartPole-v1, Acrobot-v1, MountainCar-v0, MountainCarContinuous-v0
// and Pendulum-v1, each as a single envs.Env and as an envs.VecEnv that steps N copies without
// allocating.
//
// Same ids, spaces, dynamics, rewards, termination and TimeLimit (500, 500, 200, 999 and 200 steps),
// and the same reset(seed, options): the initial state is drawn with a port of numpy's default_rng
// (package nprand), so a seed gives the state Gymnasium gives. The arithmetic follows Gymnasium's
// source operation by operation, including numpy 2's float32 rules (MountainCarContinuous works in
// float32 after its first step, Pendulum's u**2 is float32, Acrobot's first observation uses numpy's
// float32 cos and sin). With cgo, sin, cos and pow come from the same C library numpy and CPython
// call, which makes whole episodes bit-identical to Gymnasium on the same machine (see LibmIdentical);
// the parity tests in this package check that through the Python server.
//
// Make options (gymnasium.make keyword arguments): "max_episode_steps" (int >= 1, the TimeLimit),
// "sutton_barto_reward" (bool, CartPole), "goal_velocity" (number, both MountainCars), "g" (number,
// Pendulum), and for VecEnvs "autoreset" ("next-step" or "disabled"). Reset options: "low" and "high"
// (CartPole, Acrobot, both MountainCars) and "x_init" and "y_init" (Pendulum), with Gymnasium's
// defaults and checks. Unknown options, malformed bounds, negative seeds, and actions outside the
// action space (NaN included) are errors, never panics.
//
// Differences from Gymnasium, all on misuse: Gymnasium ignores unknown reset options, clips
// Pendulum's out-of-range torques and tolerates steps after the end of an episode; here each is an
// error; Acrobot reduces angles beyond 2^22 rad (reachable only from absurd reset bounds) with
// math.Mod instead of looping for minutes, or forever for an infinite angle, as Gymnasium would. A
// first reset without a seed draws 128 bits of operating-system entropy, as Gymnasium does.
package classic
