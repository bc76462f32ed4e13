package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bloomwatch/bloomwatch/spv"
)

// TestBroadcastTextRebroadcast checks the line that says whether the
// transaction is rebroadcast: a standalone broadcast says in one line
// that nothing resends it (its process exits), a running node's says it
// resends it until its first confirmation, or that it does not hold it.
func TestBroadcastTextRebroadcast(t *testing.T) {
	tests := []struct {
		name                    string
		rebroadcast, standalone bool
		want                    string
	}{
		{"standalone", false, true, "not rebroadcast: no node runs on this wallet and this process exits"},
		{"running node, held", true, false, "rebroadcast: the running node sends it again over a fresh connection on each block until its first confirmation"},
		{"running node, not held", false, false, "not rebroadcast: the node does not hold it"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := &spv.BroadcastResult{SentTo: "127.0.0.1:18444", ConfirmedBy: "127.0.0.1:18445", Rebroadcast: tc.rebroadcast}
			var lines []string
			for _, l := range strings.Split(broadcastText(res, nil, tc.standalone, ""), "\n") {
				if strings.Contains(l, "rebroadcast") {
					lines = append(lines, l)
				}
			}
			require.Len(t, lines, 1, "one line about rebroadcasting")
			require.True(t, strings.HasPrefix(lines[0], tc.want), "%q, want it to begin %q", lines[0], tc.want)
		})
	}
}
