package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestDefaultDatadir checks where a command without --datadir works: the
// default data dir of its network under the home directory (testnet is
// testnet3's), $BLOOMWATCH_DATADIR before it, --datadir before both.
func TestDefaultDatadir(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	code, out, errOut := runCLI(t, []string{"wallet", "create", "--network", "regtest", "--xpub", testVpub, "--json"})
	require.Equal(t, 0, code, errOut)
	var created struct {
		Datadir string `json:"datadir"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &created))
	regtest := filepath.Join(home, ".bloomwatch", "regtest")
	require.Equal(t, regtest, created.Datadir)

	code, _, errOut = runCLI(t, []string{"wallet", "balance", "--network", "regtest"})
	require.Equal(t, 0, code, errOut)
	// mainnet's default holds no wallet; testnet names testnet3's.
	code, _, errOut = runCLI(t, []string{"wallet", "balance"})
	require.Equal(t, 2, code)
	require.Contains(t, errOut, filepath.Join(home, ".bloomwatch", "mainnet"))
	_, _, errOut = runCLI(t, []string{"wallet", "utxos", "--network", "testnet"})
	require.Contains(t, errOut, filepath.Join(home, ".bloomwatch", "testnet3"))

	t.Setenv(DatadirEnv, regtest)
	code, _, errOut = runCLI(t, []string{"wallet", "txs"})
	require.Equal(t, 0, code, errOut)
	other := t.TempDir()
	code, _, errOut = runCLI(t, []string{"wallet", "txs", "--datadir", other})
	require.Equal(t, 2, code)
	require.Contains(t, errOut, other)
}

// TestConfigFile checks the data dir's bloomwatch.conf: a key sets the
// running command's flag unless the command line does, other commands'
// keys are skipped, and each bad line is one error line naming the file
// and the line, exit 2.
func TestConfigFile(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	dir := filepath.Join(t.TempDir(), "w")
	code, _, errOut := runCLI(t, []string{"wallet", "create", "--datadir", dir, "--network", "regtest", "--xpub", testVpub})
	require.Equal(t, 0, code, errOut)
	conf := filepath.Join(dir, ConfigFile)
	write := func(text string) {
		require.NoError(t, os.WriteFile(conf, []byte(text), 0o600))
	}

	write("# bloomwatch\n[Application Options]\njson = true\nconnect = 127.0.0.1:18444\nconnect = 127.0.0.1:18445\n; sync's, skipped here\nmax-peers=3\n")
	code, out, errOut := runCLI(t, []string{"wallet", "balance", "--datadir", dir})
	require.Equal(t, 0, code, errOut)
	require.True(t, json.Valid([]byte(out)), out)
	code, out, _ = runCLI(t, []string{"wallet", "balance", "--datadir", dir, "--json=false"})
	require.Equal(t, 0, code)
	require.Contains(t, out, "not synced yet")

	t.Setenv(DatadirEnv, dir)
	for _, tc := range []struct{ name, text, sub string }{
		{"no equals", "json = true\nconnect 127.0.0.1:1\n", ConfigFile + ":2: want key = value"},
		{"no key", "= 1\n", ConfigFile + ":1: want key = value"},
		{"unknown key", "\n\nconect = 127.0.0.1:1\n", ConfigFile + `:3: unknown option "conect"`},
		{"datadir", "datadir = /tmp\n", ConfigFile + ":1: datadir cannot be set"},
		{"bad value", "json = maybe\n", ConfigFile + `:1: json = "maybe"`},
		{"bad number", "limit = many\n", ConfigFile + `:1: limit = "many"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			write(tc.text)
			code, out, errOut := runCLI(t, []string{"wallet", "txs"})
			require.Equal(t, 2, code, errOut)
			require.Empty(t, out)
			require.Equal(t, 1, strings.Count(errOut, "\n"), errOut)
			require.True(t, strings.HasPrefix(errOut, "bloomwatch: wallet txs: "+conf), errOut)
			require.Contains(t, errOut, tc.sub)
		})
	}

	// A file above its bound is refused before it is read, in one line.
	write(strings.Repeat("# padding\n", maxConfigFileBytes/10+1))
	code, out, errOut = runCLI(t, []string{"wallet", "txs"})
	require.Equal(t, 2, code, errOut)
	require.Empty(t, out)
	require.Equal(t, 1, strings.Count(errOut, "\n"), errOut)
	require.Contains(t, errOut, "above maxConfigFileBytes")
}
