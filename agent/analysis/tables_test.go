package analysis

import (
	"math"
	"strings"
	"testing"
)

func TestThousands(t *testing.T) {
	for _, tc := range []struct {
		x    float64
		want string
	}{{0, "0"}, {999.4, "999"}, {1083.2, "1,083"}, {-100.4, "−100"}, {15625, "15,625"}, {1234567, "1,234,567"}, {-0.4, "0"}, {math.NaN(), "-"}} {
		if got := thousands(tc.x); got != tc.want {
			t.Errorf("thousands(%v) = %q, want %q", tc.x, got, tc.want)
		}
	}
	if signed(2196) != "+2,196" || signed(-293) != "−293" {
		t.Errorf("signed: %q %q", signed(2196), signed(-293))
	}
}

func TestReplaceTable(t *testing.T) {
	doc := "intro\n<!-- results:a -->\nold\nrows\n<!-- /results -->\nafter\n"
	got, err := ReplaceTable(doc, "a", "| new |\n")
	if err != nil || got != "intro\n<!-- results:a -->\n| new |\n<!-- /results -->\nafter\n" {
		t.Fatalf("got %q, %v", got, err)
	}
	for _, tc := range []struct{ name, doc, want string }{
		{"no marker", "text\n", "not in the file once"},
		{"marker twice", "<!-- results:a -->\n<!-- /results -->\n<!-- results:a -->\n<!-- /results -->\n", "not in the file once"},
		{"no end", "<!-- results:a -->\nrows\n", "has no"},
	} {
		if _, err := ReplaceTable(tc.doc, "a", "x\n"); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error saying %q", tc.name, err, tc.want)
		}
	}
}
