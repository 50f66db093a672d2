// Package algorithmic implements the algorithmic tasks of the sparse PCL paper (Copy,
// DuplicatedInput, RepeatCopy, Reverse, ReversedAddition and ReversedAddition3) exactly as OpenAI
// Gym 0.9.x defined them (gym/envs/algorithmic of that release), as a single envs.Env and
// as a native envs.VecEnv that steps N copies in one call on flat typed batches without allocating.
//
// Observation: Discrete(base+1), the symbol under the read head (base = blank). Action: by default
// the combined Discrete(M*2*base) with a = move + M*write + 2*M*char (M = 2 on the tape, 4 on the
// grid); with option "factored_actions" the Tuple(Discrete(M), Discrete(2), Discrete(base)).
// Every end of an episode is a termination; nothing here ever truncates.
//
// Make options: "base" (int >= 2), "factored_actions" (bool), and for VecEnvs "per_copy_curriculum"
// (bool; default one curriculum shared by all copies, as in the paper) and "autoreset"
// ("next-step" or "disabled"). Reset options: "input", an explicit input ([]int64 symbols for the
// tape tasks, [][]int64 columns for the grid tasks) from which the target is derived.
//
// Curriculum state can be saved and restored for exact resume: Curriculum.State/Restore for one
// curriculum, VecEnv.CurriculumState/RestoreCurriculum for a VecEnv's shared or per-copy curricula
// together with each copy's pending shortfall (plain data, JSON-friendly).
package algorithmic
