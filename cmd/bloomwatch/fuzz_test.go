package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// FuzzWalletAdd feeds arbitrary strings to `wallet add --xpub` and
// `wallet add --address` on a regtest wallet, through the CLI's run: every
// input either is accepted (exit 0, and adding it again is refused as a
// duplicate) or is refused as bad input (exit 2) with exactly one line on
// stderr and nothing on stdout. Exit 1 (an internal failure) and panics fail.
// The seed corpus is in testdata/fuzz/FuzzWalletAdd.
func FuzzWalletAdd(f *testing.F) {
	dir := filepath.Join(f.TempDir(), "wallet")
	var out, errOut bytes.Buffer
	code := run([]string{"wallet", "create", "--datadir", dir, "--network", "regtest"}, &out, &errOut)
	require.Equal(f, 0, code, "create wallet: exit %d: %s", code, errOut.String())
	f.Fuzz(func(t *testing.T, asXpub bool, input string) {
		flag := "--address="
		if asXpub {
			flag = "--xpub="
		}
		args := []string{"wallet", "add", "--datadir", dir, flag + input}
		code, stdout, stderr := runCLI(t, args)
		switch code {
		case 0:
			again, _, stderr2 := runCLI(t, args)
			require.Equal(t, 2, again, "%q accepted, then adding it again gave exit %d: %q", input, again, stderr2)
			require.Contains(t, stderr2, "already watched", "%q accepted, then adding it again gave exit %d: %q", input, again, stderr2)
		case 2:
			require.Equal(t, "", stdout, "%q refused with stdout %q, stderr %q: want one stderr line only", input, stdout, stderr)
			require.Equal(t, 1, strings.Count(stderr, "\n"), "%q refused with stdout %q, stderr %q: want one stderr line only", input, stdout, stderr)
			require.True(t, strings.HasSuffix(stderr, "\n"), "%q refused with stdout %q, stderr %q: want one stderr line only", input, stdout, stderr)
		default:
			require.FailNow(t, fmt.Sprintf("%q: exit %d (stderr %q), want 0 or 2", input, code, stderr))
		}
	})
}

// TestFuzzWalletAddCorpus checks the committed seed corpus exists, so the
// fuzz target never runs on an empty one.
func TestFuzzWalletAddCorpus(t *testing.T) {
	entries, err := os.ReadDir(filepath.Join("testdata", "fuzz", "FuzzWalletAdd"))
	require.NoError(t, err, "seed corpus: %d entries", len(entries))
	require.GreaterOrEqual(t, len(entries), 10, "seed corpus: %d entries, %v", len(entries), err)
}
