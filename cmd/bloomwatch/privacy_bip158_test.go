package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bloomwatch/bloomwatch/privacy"
	"github.com/bloomwatch/bloomwatch/session"
	"github.com/bloomwatch/bloomwatch/testnet"
)

// TestPrivacyAnalyzeBothProtocols syncs one xpub wallet twice from the
// same regtest btcd, over BIP37 and over BIP158, and runs `privacy
// analyze` on the BIP37 transcript with the BIP158 one beside it and the
// wallet's truth: the report holds both protocols' leak for the same
// wallet. Over BIP158 every used address of the wallet is among the
// candidates (the requested blocks hold every appearance), the peer saw
// the birthday and exactly the blocks the sync fetched, and precision and
// entropy are those of the candidate count.
func TestPrivacyAnalyzeBothProtocols(t *testing.T) {
	if testing.Short() {
		t.Skip("starts btcd")
	}
	h, truth := syncChain(t, testnet.ChainSpec{Blocks: 60, TxsPerBlock: 8, WatchAddrs: 10, SpendFraction: 0.3, Seed: 39})
	args := func(dir string) []string {
		return []string{"--datadir", dir, "--network", "regtest", "--xpub", truth.Xpub,
			"--birthday", itoa(truth.StartHeight + 1), "--connect", h.Node().P2PAddr()}
	}
	dir37, dir158 := filepath.Join(t.TempDir(), "w37"), filepath.Join(t.TempDir(), "w158")
	sum37 := runSyncJSON(t, args(dir37)...)
	sum158 := runSyncJSON(t, append(args(dir158), "--protocol", "bip158")...)
	checkAgainstTruth(t, sum37, truth)
	checkAgainstTruth(t, sum158, truth)
	require.NotNil(t, sum158.CF)

	truthPath := filepath.Join(t.TempDir(), "truth.txt")
	code, _, errOut := runCLI(t, []string{"wallet", "export-truth", "--datadir", dir158, "--out", truthPath})
	require.Zero(t, code, errOut)
	user, pass := h.Node().RPCCredentials()
	base := []string{"privacy", "analyze", "--transcript", session.TranscriptPath(dir37),
		"--bip158-transcript", session.TranscriptPath(dir158), "--btcd-rpc", h.Node().RPCAddr(),
		"--rpcuser", user, "--rpcpass", pass, "--truth", truthPath}
	code, out, errOut := runCLI(t, append(base, "--json"))
	require.Zero(t, code, errOut)
	var rep privacy.Report
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	b := rep.BIP158
	require.NotNil(t, b)
	require.Equal(t, truth.StartHeight+1, b.Requests.FiltersFrom, "the peer sees the birthday")
	require.Len(t, b.Requests.Blocks, sum158.CF.Blocks, "the peer saw the blocks fetched")
	require.Equal(t, sum158.Addresses.Used, b.Members, "every used address is a candidate")
	require.Equal(t, len(b.Requests.Blocks), b.WalletBlocks+b.FalsePositiveBlocks)
	require.Positive(t, b.WalletBlocks)
	require.GreaterOrEqual(t, b.Candidates, b.Members)
	require.InDelta(t, float64(b.Members)/float64(b.Candidates), b.Precision, 1e-12)
	require.NotEmpty(t, b.Curve)
	require.NotNil(t, b.FPBlocksCI)
	require.True(t, rep.HasTruth)
	require.NotEmpty(t, rep.Curves, "the BIP37 figures beside")

	code, out, errOut = runCLI(t, base)
	require.Zero(t, code, errOut)
	require.Contains(t, out, "BIP158: filters asked from height")
	require.Regexp(t, `(?m)^bip158 +[0-9]+ blocks asked +[0-9]+ +[0-9]+ `, out)
	require.Regexp(t, `(?m)^bip37 single +1 filters`, out)
	last := rep.Curves[len(rep.Curves)-1].Points
	t.Logf("BIP158: %d blocks asked (%d wallet, %d false positive), %d candidates of %d appearing, N %d: precision %.3f, entropy %.2f bits; BIP37 %s: precision %.3f",
		len(b.Requests.Blocks), b.WalletBlocks, b.FalsePositiveBlocks, b.Candidates, b.Appearing, b.Members, b.Precision, b.Entropy,
		rep.Curves[len(rep.Curves)-1].Stage, last[len(last)-1].Precision)
	t.Logf("table:\n%s", out[strings.Index(out, "BIP158:"):])
}
