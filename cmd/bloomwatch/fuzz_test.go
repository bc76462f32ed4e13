package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
	if code := run([]string{"wallet", "create", "--datadir", dir, "--network", "regtest"}, &out, &errOut); code != 0 {
		f.Fatalf("create wallet: exit %d: %s", code, errOut.String())
	}
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
			if again != 2 || !strings.Contains(stderr2, "already watched") {
				t.Fatalf("%q accepted, then adding it again gave exit %d: %q", input, again, stderr2)
			}
		case 2:
			if stdout != "" || strings.Count(stderr, "\n") != 1 || !strings.HasSuffix(stderr, "\n") {
				t.Fatalf("%q refused with stdout %q, stderr %q: want one stderr line only", input, stdout, stderr)
			}
		default:
			t.Fatalf("%q: exit %d (stderr %q), want 0 or 2", input, code, stderr)
		}
	})
}

// TestFuzzWalletAddCorpus checks the committed seed corpus exists, so the
// fuzz target never runs on an empty one.
func TestFuzzWalletAddCorpus(t *testing.T) {
	entries, err := os.ReadDir(filepath.Join("testdata", "fuzz", "FuzzWalletAdd"))
	if err != nil || len(entries) < 10 {
		t.Fatalf("seed corpus: %d entries, %v", len(entries), err)
	}
}
