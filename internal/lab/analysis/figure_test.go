package analysis

import (
	"bytes"
	"encoding/json"
	"fmt"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sparsepcl/sparsepcl/agent/config"
)

// A panels figure draws one panel per spec panel and links the PNG from its markdown file, with a
// caption that gives each arm's seeds and the env steps they reached (a run in progress says so);
// the same runs give the same bytes, and other runs other bytes.
func TestRenderFigure(t *testing.T) {
	root := t.TempDir()
	flat := func(int) float64 { return 1 }
	for _, s := range []int64{1, 2} {
		writeRun(t, filepath.Join(root, "runs", fmt.Sprintf("g3-sparse-s%d", s)), config.AlgoSparse, s, 40, flat)
		writeRun(t, filepath.Join(root, "runs", fmt.Sprintf("g3-soft-s%d", s)), config.AlgoSoft, s, 40, flat)
	}
	writeRun(t, filepath.Join(root, "runs", "g5-sparse-s1"), config.AlgoSparse, 1, 20, flat)
	writeRun(t, filepath.Join(root, "runs", "g5-soft-s1"), config.AlgoSoft, 1, 10, flat)
	spec := TableSpec{Name: "mp", File: "docs/results.md", Kind: KindPanels, Figure: &FigureSpec{
		Path: "docs/results/mp.png", Curve: "maxprob", Title: "max-prob",
		Panels: []PanelSpec{
			{Title: "3^6", Arms: []ArmSpec{{Label: "sparse", Runs: []string{"runs/g3-sparse-s*"}}, {Label: "soft", Runs: []string{"runs/g3-soft-s*"}}}},
			{Title: "5^6", Arms: []ArmSpec{{Label: "sparse", Runs: []string{"runs/g5-sparse-s*"}}, {Label: "soft", Runs: []string{"runs/g5-soft-s*"}}}},
		}}}
	f, err := RenderFigure(root, spec)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"![max-prob](results/mp.png)",
		"3^6: sparse, 2 seeds at 4,000 env steps; soft, 2 seeds at 4,000 env steps",
		"5^6: sparse, 1 seed at 2,000 env steps; soft, 1 seed at 1,000 env steps",
		"probability of the most likely action",
	} {
		if !strings.Contains(f.Text, want) {
			t.Errorf("the figure's markdown lacks %q:\n%s", want, f.Text)
		}
	}
	img, err := png.Decode(bytes.NewReader(f.PNG))
	if err != nil {
		t.Fatalf("the figure is not a PNG: %v", err)
	}
	if b := img.Bounds(); b.Dx() <= b.Dy() {
		t.Errorf("two panels side by side should be wider than high, got %v", b)
	}
	again, err := RenderFigure(root, spec)
	if err != nil || !bytes.Equal(again.PNG, f.PNG) || again.Text != f.Text {
		t.Errorf("the same runs drew another figure (err %v)", err)
	}
	writeRun(t, filepath.Join(root, "runs", "g5-soft-s1"), config.AlgoSoft, 1, 20, flat)
	if other, err := RenderFigure(root, spec); err != nil || bytes.Equal(other.PNG, f.PNG) {
		t.Errorf("a run that went on drew the same figure (err %v)", err)
	}
	// RenderTable gives the markdown alone.
	if text, err := RenderTable(root, spec); err != nil || !strings.HasPrefix(text, "![max-prob](") {
		t.Errorf("RenderTable of a panels spec: %q, %v", text, err)
	}
}

// A panels spec is checked when read: its figure's path, curve and panels, and no arms outside
// them; and a figure without runs fails naming the glob.
func TestPanelsSpecErrors(t *testing.T) {
	arm := []ArmSpec{{Label: "a", Runs: []string{"runs/*"}}}
	fig := func(edit func(*FigureSpec)) *FigureSpec {
		f := &FigureSpec{Path: "x.png", Curve: "maxprob", Panels: []PanelSpec{{Title: "p", Arms: arm}}}
		if edit != nil {
			edit(f)
		}
		return f
	}
	for _, tc := range []struct {
		name string
		spec TableSpec
		want string
	}{
		{"no figure", TableSpec{Name: "f", File: "a.md", Kind: KindPanels}, "needs a figure"},
		{"arms outside the panels", TableSpec{Name: "f", File: "a.md", Kind: KindPanels, Arms: arm, Figure: fig(nil)}, "its arms in its figure's panels"},
		{"not a png", TableSpec{Name: "f", File: "a.md", Kind: KindPanels, Figure: fig(func(f *FigureSpec) { f.Path = "x.svg" })}, "does not end in .png"},
		{"unknown curve", TableSpec{Name: "f", File: "a.md", Kind: KindPanels, Figure: fig(func(f *FigureSpec) { f.Curve = "value" })}, `curve "value" is not one of`},
		{"empty panel", TableSpec{Name: "f", File: "a.md", Kind: KindPanels, Figure: fig(func(f *FigureSpec) { f.Panels[0].Arms = nil })}, `panel "p" has no arms`},
		{"a figure on a table", TableSpec{Name: "f", File: "a.md", Kind: "summary", Arms: arm, Figure: fig(nil)}, "no figure"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := readSpecError(t, tc.spec); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("ReadTableSpecs: %v, want an error with %q", err, tc.want)
			}
		})
	}
	spec := TableSpec{Name: "f", File: "a.md", Kind: KindPanels, Figure: fig(nil)}
	if _, err := RenderFigure(t.TempDir(), spec); err == nil || !strings.Contains(err.Error(), "no run directory matches runs/*") {
		t.Errorf("RenderFigure without runs: %v", err)
	}
}

// readSpecError writes spec alone to a tables.json and returns what ReadTableSpecs says of it.
func readSpecError(t *testing.T, spec TableSpec) error {
	t.Helper()
	path := filepath.Join(t.TempDir(), "tables.json")
	data, err := json.Marshal([]TableSpec{spec})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = ReadTableSpecs(path, TableKinds())
	return err
}
