package main

import (
	"encoding/json"
	"github.com/stretchr/testify/require"
	"path/filepath"
	"strings"
	"testing"
)

// TestWalletReceive hands out receive addresses through the CLI: each
// call gives the next index, the third is refused past a gap limit of 2
// with one line and exit 2, --beyond-gap gives it, and `wallet addresses
// --unused` lists the handed-out ones as such, and no used address.
func TestWalletReceive(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "w")
	code, _, errOut := runCLI(t, createArgs(dir, "--gap-external", "2"))
	require.Equal(t, 0, code, "create: %s", errOut)
	var got []string
	for i := range 2 {
		code, out, errOut := runCLI(t, []string{"wallet", "receive", "--datadir", dir, "--json"})
		require.Equal(t, 0, code, "receive %d: exit %d: %s", i, code, errOut)
		var info struct {
			Address string `json:"address"`
			Index   uint32 `json:"index"`
			From    string `json:"from"`
		}
		require.NoError(t, json.Unmarshal([]byte(out), &info))
		require.Equal(t, uint32(i), info.Index, "receive %d: %+v", i, info)
		require.Equal(t, "m/84'/1'/0", info.From, "receive %d: %+v", i, info)
		got = append(got, info.Address)
	}
	code, out, errOut := runCLI(t, []string{"wallet", "receive", "--datadir", dir})
	require.Equal(t, 2, code, "third receive: exit %d, stdout %q, stderr %q", code, out, errOut)
	require.Equal(t, "", out, "third receive: exit %d, stdout %q, stderr %q", code, out, errOut)
	require.Equal(t, 1, strings.Count(errOut, "\n"), "third receive: exit %d, stdout %q, stderr %q", code, out, errOut)
	require.Contains(t, errOut, "past the gap limit of 2", "third receive: exit %d, stdout %q, stderr %q", code, out, errOut)
	code, out, errOut = runCLI(t, []string{"wallet", "receive", "--datadir", dir, "--beyond-gap"})
	require.Equal(t, 0, code, "--beyond-gap: exit %d, stdout %q, stderr %q", code, out, errOut)
	require.Contains(t, out, "index 2 of m/84'/1'/0", "--beyond-gap: exit %d, stdout %q, stderr %q", code, out, errOut)
	require.Contains(t, out, "past the gap limit of 2", "--beyond-gap: exit %d, stdout %q, stderr %q", code, out, errOut)
	got = append(got, strings.Fields(out)[0])
	code, out, errOut = runCLI(t, []string{"wallet", "addresses", "--datadir", dir, "--unused"})
	require.Equal(t, 0, code, "addresses --unused: %s", errOut)
	for _, a := range got {
		line := ""
		for _, l := range strings.Split(out, "\n") {
			if strings.HasPrefix(l, a) {
				line = l
			}
		}
		require.Contains(t, line, "handed out", "%s not listed as handed out: %q", a, line)
	}
	require.NotContains(t, out, " true ", "--unused lists a used address:\n%s", out)
}
