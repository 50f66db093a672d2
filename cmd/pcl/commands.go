package main

// commands lists the subcommands in the order `pcl help` shows them. Each lives in its own file.
func commands() []command {
	return []command{
		{"envbench", "measure env stepping: in-process Gymnasium vs the bridge, transport cost, Go-native vs Python", runEnvBench},
		{"list", "list the environments and their spaces", runList},
		{"check", "check that an env keeps the contract the learner and the bridge rely on (Gymnasium's)", runCheck},
		{"play", "play an environment from the terminal, or replay a list of actions", runPlay},
		{"train", "train sparse / soft / Tsallis PCL on an environment", runTrain},
		{"eval", "greedy evaluation of a training run's checkpoint", runEval},
		{"compare", "a sweep preset: sparse vs soft PCL over bases and seeds, planned, run and reported", runCompare},
		{"reproduce", "re-run a recorded run's first iterations by the binary of its commit (rebuilt when another) with its BLAS setting, and compare the metrics cell by cell", runReproduce},
		{"report", "figures and a table of long-episode runs (HalfCheetah): return and max-prob vs env steps", runReport},
		{"tables", "regenerate the result tables in README.md and docs from the committed runs, or check them (--check)", runTables},
		{"bench", "the lstm learner's iterations/s and FLOP/s against a bare gemm; on a long-episode env the whole loop's env steps/s and time split", runBench},
		{"launch", "write one Slurm job: env servers on other nodes as one step, the learner as another (pcl launch slurm)", runLaunch},
		{"sweep", "plan a sweep into a manifest, run one run by index (Slurm/Kubernetes) or N locally, report", runSweep},
		{"diagnose", "train with instrumentation: writing, support, correct-symbol mass, terms, replay content", runDiagnose},
		{"auth", "make a credential file for env servers on other machines (ZeroMQ PLAIN): pcl auth new FILE", runAuth},
		{"version", "what this binary is: the commit it was built from, its SHA-256, Go, BLAS, host", runVersion},
	}
}
