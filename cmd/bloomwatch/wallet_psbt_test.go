package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// psbtChange runs `wallet psbt --json` with extra flags and returns the
// change output's index, the PSBT and stderr.
func psbtChange(t *testing.T, dir string, extra ...string) (uint32, string, string) {
	t.Helper()
	args := append([]string{"wallet", "psbt", "--datadir", dir, "--to", testReceive0 + ":0.001", "--feerate", "2", "--json"}, extra...)
	code, out, errOut := runCLI(t, args)
	require.Zero(t, code, "%v: %s", args, errOut)
	var res struct {
		PSBT    string `json:"psbt"`
		Outputs []struct {
			Change bool   `json:"change"`
			Index  uint32 `json:"index"`
		} `json:"outputs"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &res), out)
	for _, o := range res.Outputs {
		if o.Change {
			return o.Index, res.PSBT, errOut
		}
	}
	require.FailNow(t, fmt.Sprintf("no change output: %s", out))
	return 0, "", ""
}

// TestWalletPSBTDryRunReservesNothing runs 14 `wallet psbt --dry-run`
// (the 14 previews moved the change index from 0 to 13, past the
// gap limit of 10): each shows the same change address and no PSBT, and
// the next PSBT written takes that same index. Written PSBTs then move
// the index by one each, with a warning on stderr at the last change
// address inside the gap limit and past it.
func TestWalletPSBTDryRunReservesNothing(t *testing.T) {
	fx := newSpendFixture(t, t.TempDir()) // its PSBT took change index 0
	first, _, _ := psbtChange(t, fx.dir, "--dry-run")
	require.Equal(t, uint32(1), first)
	for range 13 {
		idx, psbt, errOut := psbtChange(t, fx.dir, "--dry-run")
		require.Equal(t, first, idx, "a dry run reserves nothing")
		require.Empty(t, psbt, "a dry run carries no PSBT to sign")
		require.Empty(t, errOut)
	}
	code, out, _ := runCLI(t, []string{"wallet", "psbt", "--datadir", fx.dir, "--to", testReceive0 + ":0.001", "--feerate", "2", "--dry-run"})
	require.Zero(t, code)
	require.Contains(t, out, "dry run: no PSBT written, the change address is not reserved")
	code, _, errOut := runCLI(t, []string{"wallet", "psbt", "--datadir", fx.dir, "--to", testReceive0 + ":0.001", "--feerate", "2",
		"--dry-run", "--out", filepath.Join(t.TempDir(), "x.psbt")})
	require.Equal(t, 2, code)
	require.Contains(t, errOut, "--dry-run writes no PSBT")

	// Written PSBTs: indexes 1.. (unpaid 2..); the gap limit is 10.
	for want := uint32(1); want <= 10; want++ {
		idx, psbt, errOut := psbtChange(t, fx.dir)
		require.Equal(t, want, idx)
		require.NotEmpty(t, psbt)
		switch unpaid := want + 1; {
		case unpaid < 10:
			require.Empty(t, errOut, "index %d", idx)
		case unpaid == 10:
			require.Contains(t, errOut, "the last of the change gap limit of 10")
		default:
			require.Contains(t, errOut, "past the change gap limit of 10")
		}
		require.LessOrEqual(t, strings.Count(errOut, "\n"), 1)
	}
}
