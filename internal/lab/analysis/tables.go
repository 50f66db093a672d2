package analysis

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/sparsepcl/sparsepcl/agent/train"
)

// TableSpec is a results table generated from committed runs (pcl tables): the markdown file
// that holds it between the lines <!-- results:NAME --> and <!-- /results -->, and what it shows.
type TableSpec struct {
	Name string `json:"name"`
	File string `json:"file"` // relative to the root the spec is read against
	// Kind is "summary" (a row per arm: its seeds' return over the last 20% of the env steps,
	// seed by seed, its last greedy return and its final policy), "paired" (each arm against
	// Baseline, seed by seed, with the differences), "levers" (a screen: a row per arm with its
	// return, final policy and wall time per 1,000,000 steps) or "versus" (a row per arm, also
	// read at the first arm's wall time, seed by seed; versus.go) or "speed" (KindSpeed: the arms'
	// runs are scripts/bench-loop output files; speed.go) or "panels" (KindPanels: a figure, its
	// arms in Figure; figure.go): TableKinds. The algorithmic tasks' kinds, by the steady rule,
	// are rendered by package evaluation.
	Kind     string    `json:"kind"`
	Arms     []ArmSpec `json:"arms,omitempty"`
	Baseline *ArmSpec  `json:"baseline,omitempty"`
	// Figure is a KindPanels spec's PNG and panels (nil for every other kind).
	Figure *FigureSpec `json:"figure,omitempty"`
	// Steps, when > 0, reads every run as it stood at that many env steps (a screen's budget,
	// applied to longer runs that serve as its reference).
	Steps int64 `json:"steps,omitempty"`
	// Metric is what a paired table compares: MetricLast20 (the default: the mean return over the
	// last 20% of the env steps) or MetricFinalGreedy.
	Metric string `json:"metric,omitempty"`
}

// The metrics a paired table compares.
const (
	MetricLast20 = "last20"
	// MetricFinalGreedy is the mean return of the greedy episodes that pcl eval --returns wrote to
	// final-greedy-STEPS.json in each run directory, STEPS the spec's Steps: the figure published
	// benchmark tables give, read at the budget every run has reached.
	MetricFinalGreedy = "final-greedy"
)

// ArmSpec is one row's or column's runs: globs of run directories, relative to the root.
type ArmSpec struct {
	Label string   `json:"label"`
	Runs  []string `json:"runs"`
}

// TableKinds are the kinds of table RenderTable makes.
func TableKinds() []string {
	return []string{"summary", "paired", "levers", "versus", KindSpeed, KindPanels}
}

// ReadTableSpecs reads a JSON list of TableSpecs, each of one of kinds (the renderer's: TableKinds,
// or those of a renderer that adds its own).
func ReadTableSpecs(path string, kinds []string) ([]TableSpec, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("tables: %w", err)
	}
	var specs []TableSpec
	if err := json.Unmarshal(data, &specs); err != nil {
		return nil, fmt.Errorf("tables: %s: %w", path, err)
	}
	for _, s := range specs {
		if s.Kind == KindPanels {
			if s.Name == "" || s.File == "" || len(s.Arms) > 0 || s.Baseline != nil {
				return nil, fmt.Errorf("tables: %s: table %q needs a name and a file, and its arms in its figure's panels", path, s.Name)
			}
			if err := validateFigure(s); err != nil {
				return nil, fmt.Errorf("tables: %s: table %q: %w", path, s.Name, err)
			}
		} else if s.Name == "" || s.File == "" || len(s.Arms) == 0 || (s.Kind == "paired") != (s.Baseline != nil) || s.Figure != nil {
			return nil, fmt.Errorf("tables: %s: table %q needs a name, a file and arms, a baseline exactly when paired, and no figure", path, s.Name)
		}
		if err := validateMetric(s); err != nil {
			return nil, fmt.Errorf("tables: %s: table %q: %w", path, s.Name, err)
		}
		if !slices.Contains(kinds, s.Kind) {
			return nil, fmt.Errorf("tables: %s: table %q has kind %q, want one of %s", path, s.Name, s.Kind, strings.Join(kinds, ", "))
		}
	}
	return specs, nil
}

// RenderTable computes the table of spec, of one of TableKinds, from the runs under root. Of a
// KindPanels spec it gives the markdown alone: RenderFigure gives the PNG too.
func RenderTable(root string, spec TableSpec) (string, error) {
	switch {
	case spec.Kind == KindPanels:
		f, err := RenderFigure(root, spec)
		return f.Text, err
	case spec.Kind == "versus":
		return renderVersus(root, spec)
	case spec.Kind == KindSpeed:
		return speedTable(root, spec)
	case !slices.Contains(TableKinds(), spec.Kind):
		return "", fmt.Errorf("tables: %s: kind %q is not one of %s", spec.Name, spec.Kind, strings.Join(TableKinds(), ", "))
	}
	arms := make([][]Summary, len(spec.Arms))
	for i, a := range spec.Arms {
		var err error
		if arms[i], err = loadArm(root, a, spec.Steps); err != nil {
			return "", fmt.Errorf("tables: %s: %w", spec.Name, err)
		}
	}
	switch spec.Kind {
	case "summary":
		return summaryTable(spec.Arms, arms), nil
	case "levers":
		return leversTable(spec.Arms, arms), nil
	}
	base, err := loadArm(root, *spec.Baseline, spec.Steps)
	if err != nil {
		return "", fmt.Errorf("tables: %s: %w", spec.Name, err)
	}
	if err := validateMetric(spec); err != nil {
		return "", fmt.Errorf("tables: %s: %w", spec.Name, err)
	}
	metric := pairedLast20
	if spec.Metric == MetricFinalGreedy {
		metric = finalGreedyMetric(spec.Steps)
	}
	text, err := pairedRows(*spec.Baseline, base, spec.Arms, arms, metric)
	if err != nil {
		return "", fmt.Errorf("tables: %s: %w", spec.Name, err)
	}
	return text, nil
}

// validateMetric checks a spec's Metric: only paired tables choose one, and the final greedy
// return needs the env steps of its files.
func validateMetric(s TableSpec) error {
	switch {
	case s.Metric == "" || s.Metric == MetricLast20 && s.Kind == "paired":
		return nil
	case s.Kind != "paired":
		return fmt.Errorf("metric %q: only a paired table chooses its metric", s.Metric)
	case s.Metric != MetricFinalGreedy:
		return fmt.Errorf("metric %q is not %s or %s", s.Metric, MetricLast20, MetricFinalGreedy)
	case s.Steps <= 0:
		return fmt.Errorf("metric %s needs steps: the env steps of the final-greedy-STEPS.json files", MetricFinalGreedy)
	}
	return nil
}

// Dirs are the run directories a's globs match under root; a glob that matches none is an error.
func (a ArmSpec) Dirs(root string) ([]string, error) {
	var dirs []string
	for _, g := range a.Runs {
		m, err := filepath.Glob(filepath.Join(root, g))
		if err != nil || len(m) == 0 {
			return nil, fmt.Errorf("arm %q: no run directory matches %s", a.Label, g)
		}
		dirs = append(dirs, m...)
	}
	return dirs, nil
}

// loadArm summarises the runs of a, ordered by seed, each as it stood at steps env steps when
// steps > 0.
func loadArm(root string, a ArmSpec, steps int64) ([]Summary, error) {
	dirs, err := a.Dirs(root)
	if err != nil {
		return nil, err
	}
	recs, err := LoadRecords(dirs)
	if err != nil {
		return nil, fmt.Errorf("arm %q: %w", a.Label, err)
	}
	if steps > 0 {
		for _, r := range recs {
			if n := len(r.Rows); n == 0 || r.Rows[n-1].EnvSteps < steps {
				return nil, fmt.Errorf("arm %q: %s has not reached %d env steps", a.Label, r.Dir, steps)
			}
		}
		recs = Until(recs, steps)
	}
	out := make([]Summary, len(recs))
	for i, r := range recs {
		out[i] = Summarise(r)
	}
	slices.SortFunc(out, func(x, y Summary) int { return cmp.Compare(x.Cfg.Seed, y.Cfg.Seed) })
	return out, nil
}

// summaryTable has a row per arm.
func summaryTable(specs []ArmSpec, arms [][]Summary) string {
	var b strings.Builder
	b.WriteString("| arm | seeds | return, last 20% | per seed | last greedy | max-prob | support |\n|---|---|---|---|---|---|---|\n")
	for i, a := range arms {
		last20, greedy := field(a, func(s Summary) float64 { return s.Last20Return }), field(a, func(s Summary) float64 { return s.LastGreedy })
		var per []string
		for _, x := range last20 {
			per = append(per, thousands(x))
		}
		mp, _ := MeanStd(field(a, func(s Summary) float64 { return s.FinalMaxProb }))
		sup, _ := MeanStd(field(a, func(s Summary) float64 { return s.FinalSupport }))
		fmt.Fprintf(&b, "| %s | %d | %s | %s | %s | %s | %s |\n", specs[i].Label, len(a), intervalText(SampleInterval(last20)),
			strings.Join(per, ", "), meanStdText(SampleInterval(greedy)), numf("%.2f", mp), supportText(sup))
	}
	b.WriteString("\nMean ± sample std (n − 1) over the seeds, with the 95% Student-t interval of the mean; the return over the last 20% of each run's env steps; max-prob and support over its last tenth. Generated from the runs by `pcl tables`.\n")
	return b.String()
}

// leversTable has a row per arm of a screen: its return, its final policy and its wall time.
func leversTable(specs []ArmSpec, arms [][]Summary) string {
	var b strings.Builder
	b.WriteString("| arm | seeds | return, last 20% | final max-prob | final support | minutes per 1M steps |\n|---|---|---|---|---|---|\n")
	for i, a := range arms {
		var per []string
		for _, s := range a {
			per = append(per, thousands(s.Last20Return))
		}
		mp, _ := MeanStd(field(a, func(s Summary) float64 { return s.FinalMaxProb }))
		sup, _ := MeanStd(field(a, func(s Summary) float64 { return s.FinalSupport }))
		perM, _ := MeanStd(field(a, func(s Summary) float64 { return s.WallSeconds / 60 / float64(s.EnvSteps) * 1e6 }))
		fmt.Fprintf(&b, "| %s | %d | %s | %s | %s | %s |\n", specs[i].Label, len(a), strings.Join(per, ", "),
			numf("%.2f", mp), supportText(sup), wholeText(perM))
	}
	b.WriteString("\nThe return over the last 20% of each run's env steps (seed by seed); max-prob and support over its last tenth; minutes per 1,000,000 env steps with two runs side by side on the two cores. Generated from the runs by `pcl tables`.\n")
	return b.String()
}

// pairedMetric is what a paired table compares: each run's value (an error when a run lacks it)
// and the sentence that says what the value is.
type pairedMetric struct {
	value   func(Summary) (float64, error)
	caption string
}

// pairedLast20 is the return over the last 20% of each run's env steps.
var pairedLast20 = pairedMetric{
	value:   func(s Summary) (float64, error) { return s.Last20Return, nil },
	caption: "The return over the last 20% of each run's env steps, seed by seed",
}

// finalGreedyMetric reads each run's final-greedy-STEPS.json (written by pcl eval --returns), whose
// mean is the run's value.
func finalGreedyMetric(steps int64) pairedMetric {
	name := fmt.Sprintf("final-greedy-%d.json", steps)
	return pairedMetric{
		value: func(s Summary) (float64, error) {
			data, err := os.ReadFile(filepath.Join(s.Dir, name))
			if err != nil {
				return math.NaN(), fmt.Errorf("the final greedy return: %w", err)
			}
			var g train.GreedyReturns
			if err := json.Unmarshal(data, &g); err != nil {
				return math.NaN(), fmt.Errorf("%s: %w", filepath.Join(s.Dir, name), err)
			}
			if g.EnvSteps != steps || len(g.Returns) == 0 {
				return math.NaN(), fmt.Errorf("%s holds %d returns at %d env steps, want some at %d", filepath.Join(s.Dir, name), len(g.Returns), g.EnvSteps, steps)
			}
			return g.Mean, nil
		},
		caption: fmt.Sprintf("The final greedy return, seed by seed: the mean return of %s's deterministic episodes of the checkpoint at %s env steps (pcl eval --returns)", name, thousands(float64(steps))),
	}
}

// pairedRows has a row per seed: the baseline, then each arm and its difference from the
// baseline, and a last row of means, of metric.
func pairedRows(baseSpec ArmSpec, base []Summary, specs []ArmSpec, arms [][]Summary, metric pairedMetric) (string, error) {
	values := map[string]float64{}
	for _, a := range append([][]Summary{base}, arms...) {
		for _, s := range a {
			v, err := metric.value(s)
			if err != nil {
				return "", err
			}
			values[s.Dir] = v
		}
	}
	bySeed := func(a []Summary) map[int64]float64 {
		m := map[int64]float64{}
		for _, s := range a {
			m[s.Cfg.Seed] = values[s.Dir]
		}
		return m
	}
	b0 := bySeed(base)
	var b strings.Builder
	b.WriteString("| seed | " + baseSpec.Label)
	for _, s := range specs {
		b.WriteString(" | " + s.Label + " | difference")
	}
	b.WriteString(" |\n|---" + strings.Repeat("|---", 1+2*len(specs)) + "|\n")
	diffs := make([][]float64, len(arms))
	var baseVals []float64
	for _, s := range base {
		bv := values[s.Dir]
		fmt.Fprintf(&b, "| %d | %s", s.Cfg.Seed, thousands(bv))
		baseVals = append(baseVals, bv)
		for i, a := range arms {
			v, ok := bySeed(a)[s.Cfg.Seed]
			if !ok {
				return "", fmt.Errorf("tables: arm %q has no run of seed %d", specs[i].Label, s.Cfg.Seed)
			}
			diffs[i] = append(diffs[i], v-bv)
			fmt.Fprintf(&b, " | %s | %s", thousands(v), signed(v-bv))
		}
		b.WriteString(" |\n")
	}
	fmt.Fprintf(&b, "| mean ± std (95%%) | %s", intervalText(SampleInterval(baseVals)))
	for i, a := range arms {
		if len(a) != len(b0) {
			return "", fmt.Errorf("tables: arm %q has %d runs, the baseline %d", specs[i].Label, len(a), len(b0))
		}
		fmt.Fprintf(&b, " | %s | %s", intervalText(SampleInterval(field(a, func(s Summary) float64 { return values[s.Dir] }))), intervalText(SampleInterval(diffs[i])))
	}
	b.WriteString(" |\n\n" + metric.caption + "; mean ± sample std (n − 1) and the 95% Student-t interval of the mean. Generated from the runs by `pcl tables`.\n")
	return b.String(), nil
}

// supportText is a support size: one decimal for a few actions, a whole number for many.
func supportText(x float64) string {
	if x >= 100 {
		return thousands(x)
	}
	return numf("%.1f", x)
}

func field(a []Summary, f func(Summary) float64) []float64 {
	out := make([]float64, len(a))
	for i, s := range a {
		out[i] = f(s)
	}
	return out
}

// intervalText is "mean ± std (lower to upper)".
func intervalText(iv Interval) string {
	return fmt.Sprintf("%s ± %s (%s to %s)", thousands(iv.Mean), thousands(iv.Std), thousands(iv.Lower), thousands(iv.Upper))
}

// meanStdText is "mean ± std".
func meanStdText(iv Interval) string { return thousands(iv.Mean) + " ± " + thousands(iv.Std) }

// thousands is x rounded to a whole number with thousands separators ("-" for NaN).
func thousands(x float64) string {
	if math.IsNaN(x) {
		return "-"
	}
	s := fmt.Sprintf("%.0f", math.Abs(x))
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	if math.Round(x) < 0 {
		s = "−" + s
	}
	return s
}

// signed is thousands with a sign on positive values too.
func signed(x float64) string {
	if math.Round(x) > 0 {
		return "+" + thousands(x)
	}
	return thousands(x)
}

// ReplaceTable puts table between the markers of name in doc. It is an error when the markers
// are not there, once each.
func ReplaceTable(doc, name, table string) (string, error) {
	open, end := "<!-- results:"+name+" -->\n", "<!-- /results -->"
	i := strings.Index(doc, open)
	if i < 0 || strings.Count(doc, open) != 1 {
		return "", fmt.Errorf("tables: the marker %q is not in the file once", strings.TrimSpace(open))
	}
	j := strings.Index(doc[i:], end)
	if j < 0 {
		return "", fmt.Errorf("tables: %q has no %q after it", strings.TrimSpace(open), end)
	}
	return doc[:i+len(open)] + table + doc[i+j:], nil
}
