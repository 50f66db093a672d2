// Package evaluation reads what the runs of sweeps reached and judges it: a sweep's report (the
// statistics over seeds, the pass rules, the tables and the figures, drawn in one palette), the
// choice of a weight or a configuration from a search, the plan of the evaluation sweeps that
// follow from those choices, the comparison of sparse against soft PCL per task size, and the
// tables of the committed results. `pcl report`, `pcl sweep report`/`choose`/`evaluate` and `pcl tables`
// are its commands; package sweep plans and runs the sweeps it reads.
//
// Reports read each run's config.json, never its name, so run directories named by earlier
// schemes (compare's base<b>/<algo>-seed<s>, the scripts' <algo>-a<alpha>-s<seed>) report alike.
package evaluation
