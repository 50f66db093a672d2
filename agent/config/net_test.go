package config

import "testing"

// TestWithNet checks that only "auto" is resolved, and that LongEpisodes follows the family.
func TestWithNet(t *testing.T) {
	tests := []struct {
		net         string
		algorithmic bool
		want        string
		long        bool
	}{
		{NetAuto, true, NetLSTM, false},
		{NetAuto, false, NetMLP, true},
		{NetLSTM, false, NetLSTM, false},
		{NetMLP, true, NetMLP, true},
	}
	for _, tc := range tests {
		c := Default()
		c.Net = tc.net
		got := c.WithNet(tc.algorithmic)
		if got.Net != tc.want || got.LongEpisodes() != tc.long {
			t.Errorf("Net %q, algorithmic %v: got %q (long episodes %v), want %q (%v)", tc.net, tc.algorithmic, got.Net, got.LongEpisodes(), tc.want, tc.long)
		}
	}
}
