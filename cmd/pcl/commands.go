package main

// commands lists the subcommands in the order `pcl help` shows them. Each lives in its own file.
func commands() []command {
	return []command{
		// one line per subcommand, e.g. {"list", "list the environments and their spaces", runList},
	}
}
