package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/btcsuite/btcd/btcec/v2"
	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/chaincfg"
	"github.com/stretchr/testify/require"
)

// TestPrivateKeysNeverEchoed gives private keys where addresses and
// extended public keys go (--address, --xpub, --descriptor, a line of
// --addresses-file), valid ones and mistyped ones: each is refused with
// one line that says a private key was given and repeats none of it.
// Before, the error quoted its first 24 characters.
func TestPrivateKeysNeverEchoed(t *testing.T) {
	priv, err := btcec.NewPrivateKey()
	require.NoError(t, err)
	wif, err := btcutil.NewWIF(priv, &chaincfg.RegressionNetParams, true)
	require.NoError(t, err)
	mainWIF, err := btcutil.NewWIF(priv, &chaincfg.MainNetParams, false)
	require.NoError(t, err)
	w := wif.String()
	swap := "a" // one character changed: a bad checksum
	if w[20] == 'a' {
		swap = "b"
	}
	typo := w[:20] + swap + w[21:]
	badXprv := testMainXprv[:60] + "Z" + testMainXprv[61:]
	root := t.TempDir()
	wallet := filepath.Join(root, "w")
	code, out, errOut := runCLI(t, createArgs(wallet))
	require.Equal(t, 0, code, "create: %d %s %s", code, out, errOut)
	file := filepath.Join(root, "addrs.txt")
	require.NoError(t, os.WriteFile(file, []byte("# mine\n"+w+" # paste\n"), 0o600))
	missing := filepath.Join(root, "none")
	for _, c := range []struct {
		name   string
		args   []string
		secret string
	}{
		{"address WIF", []string{"wallet", "create", "--datadir", missing, "--network", "regtest", "--address", w}, w},
		{"address mainnet uncompressed WIF", []string{"wallet", "create", "--datadir", missing, "--network", "mainnet", "--address", mainWIF.String()}, mainWIF.String()},
		{"address mistyped WIF", []string{"wallet", "create", "--datadir", missing, "--network", "regtest", "--address", typo}, typo},
		{"xpub WIF", []string{"wallet", "create", "--datadir", missing, "--network", "regtest", "--xpub", w}, w},
		{"xpub mistyped xprv", []string{"wallet", "create", "--datadir", missing, "--network", "mainnet", "--xpub", badXprv}, badXprv},
		{"descriptor mistyped WIF", []string{"wallet", "create", "--datadir", missing, "--network", "regtest", "--descriptor", "wpkh(" + typo + ")"}, typo},
		{"add address WIF", []string{"wallet", "add", "--datadir", wallet, "--address", w}, w},
		{"add addresses file", []string{"wallet", "add", "--datadir", wallet, "--addresses-file", file}, w},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, out, errOut := runCLI(t, c.args)
			require.Equal(t, 2, code, "exit %d, stdout %q, stderr %q: want exit 2 and one line naming a private key", code, out, errOut)
			require.Equal(t, "", out, "exit %d, stdout %q, stderr %q: want exit 2 and one line naming a private key", code, out, errOut)
			require.Equal(t, 1, strings.Count(errOut, "\n"), "exit %d, stdout %q, stderr %q: want exit 2 and one line naming a private key", code, out, errOut)
			require.Contains(t, errOut, "private key", "exit %d, stdout %q, stderr %q: want exit 2 and one line naming a private key", code, out, errOut)
			for i := 0; i+8 <= len(c.secret); i++ {
				part := c.secret[i : i+8]
				require.NotContains(t, errOut, part, "stderr %q repeats %q of the private key", errOut, part)
			}
		})
	}
	_, err = os.Stat(missing)
	require.True(t, os.IsNotExist(err), "a refused create left %s: %v", missing, err)
}

// TestBirthdayBounded: a birthday above wallet.MaxBirthday (2147483647,
// the largest an int32 flag takes) is refused at create; before, it was
// stored and every sync scanned nothing.
func TestBirthdayBounded(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "w")
	code, out, errOut := runCLI(t, createArgs(dir, "--birthday", "2147483647"))
	require.Equal(t, 2, code, "exit %d, stdout %q, stderr %q", code, out, errOut)
	require.Equal(t, "", out, "exit %d, stdout %q, stderr %q", code, out, errOut)
	require.Contains(t, errOut, "birthday", "exit %d, stdout %q, stderr %q", code, out, errOut)
	require.Contains(t, errOut, "at most 50000000", "exit %d, stdout %q, stderr %q", code, out, errOut)
	_, err := os.Stat(dir)
	require.True(t, os.IsNotExist(err), "a refused create left %s", dir)
	code, _, errOut = runCLI(t, createArgs(dir, "--birthday", "50000000"))
	require.Equal(t, 0, code, "the bound itself refused: %s", errOut)
}
