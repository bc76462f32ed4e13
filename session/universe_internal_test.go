package session

import (
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/bloomwatch/bloomwatch/privacy/element"
	"github.com/stretchr/testify/require"
)

// TestUniverseFeedPersists follows the meter's universe estimate across
// runs: counted from the merkleblocks' transaction totals, saved next to
// the transcript, reloaded at the next start (not reset), replaced pro
// rata by a rescan, ignored when malformed, and replaced by Bitcoin
// Core's chainTxData on mainnet.
func TestUniverseFeedPersists(t *testing.T) {
	dir := t.TempDir()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	u := loadUniverse(dir, "regtest", log)
	n, src := u.size()
	require.Equal(t, uint64(0), n, "fresh: %d %q", n, src)
	require.Contains(t, src, "no merkleblock", "fresh: %d %q", n, src)
	// Run 1: blocks 101..200, 1,000 transactions.
	u.block(101, false)
	u.update(1000, 200)
	n, src = u.size()
	require.Equal(t, uint64(1000*element.ScriptsPerTx), n, "run 1: %d %q", n, src)
	require.Contains(t, src, "heights 101..200", "run 1: %d %q", n, src)
	require.Contains(t, src, UniverseFile, "run 1: %d %q", n, src)
	require.NoError(t, u.save())
	// Run 2 starts where run 1 stopped: the estimate is there before any
	// block, and grows by this run's count.
	u = loadUniverse(dir, "regtest", log)
	n, _ = u.size()
	require.Equal(t, uint64(1000*element.ScriptsPerTx), n, "after restart: %d", n)
	u.block(201, false)
	u.update(500, 250)
	n, src = u.size()
	require.Equal(t, uint64(1500*element.ScriptsPerTx), n, "run 2: %d %q", n, src)
	require.Contains(t, src, "heights 101..250", "run 2: %d %q", n, src)
	require.NoError(t, u.save())
	// Run 3 rescans from height 151: the part of the 1,500 below it is
	// kept pro rata (50 of 150 heights), the rest counted again.
	u = loadUniverse(dir, "regtest", log)
	u.block(151, true) // a block delivered again does not start the run
	u.block(151, false)
	u.update(1200, 250)
	n, _ = u.size()
	require.Equal(t, uint64((500+1200)*element.ScriptsPerTx), n, "rescan: %d, want %d", n, (500+1200)*element.ScriptsPerTx)
	// Another network's file, or a malformed one, starts over.
	u = loadUniverse(dir, "simnet", log)
	require.Equal(t, uint64(0), u.cur.Txs, "simnet read regtest's estimate: %+v", u.cur)
	require.NoError(t, os.WriteFile(filepath.Join(dir, UniverseFile), []byte("{not json"), 0o600))
	u = loadUniverse(dir, "regtest", log)
	require.Equal(t, uint64(0), u.cur.Txs, "malformed file read: %+v", u.cur)
	// Mainnet: the whole chain's figure, whatever was counted.
	m := loadUniverse(t.TempDir(), "mainnet", log)
	m.block(900000, false)
	m.update(10, 900001)
	n, src = m.size()
	require.Equal(t, element.MainnetChainTxData.Candidates(), n, "mainnet: %d %q", n, src)
	require.Contains(t, src, "chainTxData", "mainnet: %d %q", n, src)
}
