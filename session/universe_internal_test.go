package session

import (
	"github.com/bloomwatch/bloomwatch/privacy/element"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
	if n, src := u.size(); n != 0 || !strings.Contains(src, "no merkleblock") {
		t.Fatalf("fresh: %d %q", n, src)
	}
	// Run 1: blocks 101..200, 1,000 transactions.
	u.block(101, false)
	u.update(1000, 200)
	if n, src := u.size(); n != 1000*element.ScriptsPerTx || !strings.Contains(src, "heights 101..200") || !strings.Contains(src, UniverseFile) {
		t.Fatalf("run 1: %d %q", n, src)
	}
	if err := u.save(); err != nil {
		t.Fatal(err)
	}
	// Run 2 starts where run 1 stopped: the estimate is there before any
	// block, and grows by this run's count.
	u = loadUniverse(dir, "regtest", log)
	if n, _ := u.size(); n != 1000*element.ScriptsPerTx {
		t.Fatalf("after restart: %d", n)
	}
	u.block(201, false)
	u.update(500, 250)
	if n, src := u.size(); n != 1500*element.ScriptsPerTx || !strings.Contains(src, "heights 101..250") {
		t.Fatalf("run 2: %d %q", n, src)
	}
	if err := u.save(); err != nil {
		t.Fatal(err)
	}
	// Run 3 rescans from height 151: the part of the 1,500 below it is
	// kept pro rata (50 of 150 heights), the rest counted again.
	u = loadUniverse(dir, "regtest", log)
	u.block(151, true) // a block delivered again does not start the run
	u.block(151, false)
	u.update(1200, 250)
	if n, _ := u.size(); n != (500+1200)*element.ScriptsPerTx {
		t.Fatalf("rescan: %d, want %d", n, (500+1200)*element.ScriptsPerTx)
	}
	// Another network's file, or a malformed one, starts over.
	if u := loadUniverse(dir, "simnet", log); u.cur.Txs != 0 {
		t.Errorf("simnet read regtest's estimate: %+v", u.cur)
	}
	if err := os.WriteFile(filepath.Join(dir, UniverseFile), []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	if u := loadUniverse(dir, "regtest", log); u.cur.Txs != 0 {
		t.Errorf("malformed file read: %+v", u.cur)
	}
	// Mainnet: the whole chain's figure, whatever was counted.
	m := loadUniverse(t.TempDir(), "mainnet", log)
	m.block(900000, false)
	m.update(10, 900001)
	if n, src := m.size(); n != element.MainnetChainTxData.Candidates() || !strings.Contains(src, "chainTxData") {
		t.Errorf("mainnet: %d %q", n, src)
	}
}
