package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bloomwatch/bloomwatch/session"
	"github.com/bloomwatch/bloomwatch/transcript"
	"github.com/bloomwatch/bloomwatch/wallet"
)

// sparseFile creates path as a sparse file of size bytes: refused by its
// size, it costs no disk.
func sparseFile(t *testing.T, path string, size int64) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o700))
	f, err := os.Create(path)
	require.NoError(t, err)
	require.NoError(t, f.Truncate(size))
	require.NoError(t, f.Close())
}

// TestOversizedLocalInputs hands every command that reads a local file a
// file above its bound: each exits non-zero with one stderr line naming
// the file and the bound, prints nothing on stdout, and leaves the file
// (and the wallet) as they were.
func TestOversizedLocalInputs(t *testing.T) {
	big := t.TempDir()
	wdir := filepath.Join(big, "wallet")
	code, _, errOut := runCLI(t, createArgs(wdir))
	require.Zero(t, code, errOut)

	psbtFile := filepath.Join(big, "spend.psbt")
	sparseFile(t, psbtFile, maxPSBTFileBytes+1)
	trFile := filepath.Join(big, "transcript.jsonl")
	sparseFile(t, trFile, transcript.MaxFileBytes+1)
	addrFile := filepath.Join(big, "addresses.txt")
	line := "#" + strings.Repeat("x", 1022) + "\n"
	require.NoError(t, os.WriteFile(addrFile, []byte(strings.Repeat(line, wallet.MaxAddressListBytes/len(line)+1)), 0o600))

	// The node's own files: a data dir whose transcript, or ban list of
	// peers, is above its bound.
	trDir := filepath.Join(big, "trwallet")
	code, _, errOut = runCLI(t, createArgs(trDir))
	require.Zero(t, code, errOut)
	sparseFile(t, filepath.Join(session.NodePath(trDir), transcript.FileName), transcript.MaxFileBytes+1)
	banDir := filepath.Join(big, "banwallet")
	code, _, errOut = runCLI(t, createArgs(banDir))
	require.Zero(t, code, errOut)
	sparseFile(t, filepath.Join(session.NodePath(banDir), "bans.json"), 16<<20+1)

	syncArgs := func(dir string) []string {
		return []string{"sync", "--datadir", dir, "--connect", "127.0.0.1:1", "--no-tui", "--until-synced"}
	}
	for _, tc := range []struct {
		name string
		args []string
		code int
		sub  string
		// file is the oversized input, wallet the wallet dir used:
		// neither may change.
		file, wallet string
	}{
		{"broadcast PSBT file", []string{"broadcast", "--datadir", wdir, "--psbt", psbtFile, "--connect", "127.0.0.1:1"}, 2, "above maxPSBTFileBytes", psbtFile, wdir},
		{"privacy analyze transcript", []string{"privacy", "analyze", "--transcript", trFile, "--synthetic", "10"}, 0, "above transcript.MaxFileBytes", trFile, wdir},
		{"wallet add addresses file", []string{"wallet", "add", "--datadir", wdir, "--addresses-file", addrFile}, 2, "longer than wallet.MaxAddressListBytes", addrFile, wdir},
		{"sync node transcript", syncArgs(trDir), 1, "above transcript.MaxFileBytes", filepath.Join(session.NodePath(trDir), transcript.FileName), trDir},
		{"sync ban list of peers", syncArgs(banDir), 1, "above spv.MaxStateFileBytes", filepath.Join(session.NodePath(banDir), "bans.json"), banDir},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := fileState(t, tc.file) + fileState(t, filepath.Join(tc.wallet, "wallet.db"))
			code, out, errOut := runCLI(t, tc.args)
			if tc.code != 0 {
				require.Equal(t, tc.code, code, errOut)
			} else {
				require.NotZero(t, code, errOut)
			}
			require.Empty(t, out)
			require.Equal(t, 1, strings.Count(errOut, "\n"), "one stderr line: %q", errOut)
			require.Contains(t, errOut, tc.sub)
			t.Log(strings.TrimSpace(errOut))
			require.Equal(t, before, fileState(t, tc.file)+fileState(t, filepath.Join(tc.wallet, "wallet.db")), "the input and the wallet are as they were")
		})
	}
}

// fileState describes path by size, mode and modification time (an
// oversized input is not read to hash it).
func fileState(t *testing.T, path string) string {
	t.Helper()
	fi, err := os.Stat(path)
	require.NoError(t, err)
	return fmt.Sprintf("%s %d %v %d;", path, fi.Size(), fi.Mode(), fi.ModTime().UnixNano())
}
