package spv

import (
	"bytes"
	"github.com/bloomwatch/bloomwatch/bip37"
	"github.com/bloomwatch/bloomwatch/filterpolicy"
	"github.com/bloomwatch/bloomwatch/watch"
	"github.com/bloomwatch/bloomwatch/watch/watchtest"
	"github.com/stretchr/testify/require"
	"os"
	"path/filepath"
	"testing"

	"github.com/bloomwatch/bloomwatch/netparams"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
)

// TestDecoyFileRoundTrip: no file is no decoys; written decoys read back
// in order, in a file only the user reads.
func TestDecoyFileRoundTrip(t *testing.T) {
	dir := t.TempDir()
	got, err := ReadDecoys(dir)
	require.NoError(t, err, "no file: %x", got)
	require.Len(t, got, 0, "no file: %x, %v", got, err)
	want := [][]byte{bytes.Repeat([]byte{1}, 20), bytes.Repeat([]byte{2}, 32), {3}}
	require.NoError(t, writeDecoys(dir, want, nil))
	got, err = ReadDecoys(dir)
	require.NoError(t, err, "read back %x", got)
	require.Len(t, got, len(want), "read back %x, %v", got, err)
	for i := range want {
		require.Equal(t, want[i], got[i], "decoy %d = %x, want %x", i, got[i], want[i])
	}
	st, err := os.Stat(filepath.Join(dir, DecoyFile))
	require.NoError(t, err, "mode %v", st.Mode())
	require.Equal(t, os.FileMode(stateFileMode), st.Mode().Perm(), "mode %v, %v", st.Mode(), err)
}

// TestDecoyFileCorrupt: a decoy file that cannot be read stops the node
// with ErrCorruptDecoys naming the file, and is left as it was; a node
// without decoys does not read it.
func TestDecoyFileCorrupt(t *testing.T) {
	net, err := netparams.Lookup("regtest")
	require.NoError(t, err)
	for name, content := range map[string]string{
		"garbage":   "{not json",
		"version":   `{"version":9,"decoys":[]}`,
		"hex":       `{"version":1,"decoys":["zz"]}`,
		"empty":     `{"version":1,"decoys":[""]}`,
		"repeated":  `{"version":1,"decoys":["0101","0101"]}`,
		"truncated": `{"version":1,"decoys":["0101"`,
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, DecoyFile)
			require.NoError(t, os.WriteFile(path, []byte(content), 0o600))
			_, err := ReadDecoys(dir)
			require.ErrorIs(t, err, ErrCorruptDecoys, "read: %v", err)
			require.Contains(t, err.Error(), path, "read: %v", err)
			_, err = New(Config{Network: net, DataDir: dir, Watcher: watchtest.NewMemWatcher(0, p2wpkh(1)), Decoys: 3})
			require.ErrorIs(t, err, ErrCorruptDecoys, "New: %v", err)
			require.Contains(t, err.Error(), path, "New: %v", err)
			raw, _ := os.ReadFile(path)
			require.Equal(t, content, string(raw), "file changed to %q", raw)
			n, err := New(Config{Network: net, DataDir: dir, Watcher: watchtest.NewMemWatcher(0, p2wpkh(1))})
			require.NoError(t, err, "New without decoys")
			require.NoError(t, n.Stop())
		})
	}
}

// TestConfigDecoysRange: Decoys outside [0, MaxDecoys] is a bad config.
func TestConfigDecoysRange(t *testing.T) {
	net, err := netparams.Lookup("regtest")
	require.NoError(t, err)
	for _, d := range []int{-1, MaxDecoys + 1} {
		_, err := New(Config{Network: net, DataDir: t.TempDir(), Watcher: watchtest.NewMemWatcher(0, p2wpkh(1)), Decoys: d})
		require.ErrorIs(t, err, ErrBadConfig, "Decoys %d: %v", d, err)
	}
}

// TestDecoysTopUpAndMatch: decoys come from the watcher's transactions
// (never its own elements), persist, stop at the maximum, are kept when
// the maximum is lowered, and their matches (a push, or a spend of a
// decoy-matched output) are recognised.
func TestDecoysTopUpAndMatch(t *testing.T) {
	dir := t.TempDir()
	d, err := loadDecoys(dir, 2)
	require.NoError(t, err)
	mine := p2wpkh(1)
	tx := wire.NewMsgTx(wire.TxVersion)
	tx.AddTxIn(wire.NewTxIn(&wire.OutPoint{Hash: chainhash.Hash{9}}, nil, nil))
	tx.AddTxOut(wire.NewTxOut(1, mine))
	tx.AddTxOut(wire.NewTxOut(1, p2wpkh(2)))
	tx.AddTxOut(wire.NewTxOut(1, p2wpkh(3)))
	tx.AddTxOut(wire.NewTxOut(1, p2wpkh(4)))
	own := func(p []byte) bool { return bytes.Equal(p, mine[2:]) }
	added, err := d.topUp([]*wire.MsgTx{tx}, own)
	require.NoError(t, err, "top up: %v", added)
	require.True(t, added, "top up: %v %v", added, err)
	want := [][]byte{p2wpkh(2)[2:], p2wpkh(3)[2:]}
	onDisk, err := ReadDecoys(dir)
	require.NoError(t, err, "persisted %x, %v; want %x", onDisk, err, want)
	require.Len(t, onDisk, 2, "persisted %x, %v; want %x", onDisk, err, want)
	require.Equal(t, want[0], onDisk[0], "persisted %x, %v; want %x", onDisk, err, want)
	require.Equal(t, want[1], onDisk[1], "persisted %x, %v; want %x", onDisk, err, want)
	added, err = d.topUp([]*wire.MsgTx{tx}, own)
	require.NoError(t, err, "full: added %v, %v", added, err)
	require.False(t, added, "full: added %v, %v", added, err)
	// The same decoys after a restart; fewer with a lower maximum, the
	// file unchanged.
	again, err := loadDecoys(dir, 1)
	require.NoError(t, err, "reloaded %x", again.active())
	require.Len(t, again.active(), 1, "reloaded %x, %v", again.active(), err)
	require.Equal(t, want[0], again.active()[0], "reloaded %x, %v", again.active(), err)
	got, _ := ReadDecoys(dir)
	require.Len(t, got, 2, "lowering the maximum rewrote the file: %x", got)
	// A filter built with them holds them.
	f, err := filterpolicy.BuildFilter(watch.Elements{Data: append([][]byte{mine[2:]}, d.active()...)}, filterpolicy.DefaultFPRate, 7)
	require.NoError(t, err)
	for _, e := range want {
		require.True(t, f.Matches(e), "filter lacks decoy %x", e)
	}
	// Matches: a payment to a decoy, then its spend; not a stranger's.
	pay := wire.NewMsgTx(wire.TxVersion)
	pay.AddTxIn(wire.NewTxIn(&wire.OutPoint{Hash: chainhash.Hash{8}}, nil, nil))
	pay.AddTxOut(wire.NewTxOut(5, p2wpkh(3)))
	require.Equal(t, string(want[1]), d.matches(pay, pay.TxHash()), "payment to a decoy")
	spend := wire.NewMsgTx(wire.TxVersion)
	spend.AddTxIn(wire.NewTxIn(&wire.OutPoint{Hash: pay.TxHash()}, nil, nil))
	spend.AddTxOut(wire.NewTxOut(4, p2wpkh(7)))
	require.Equal(t, string(want[1]), d.matches(spend, spend.TxHash()), "spend of a decoy-matched output")
	other := wire.NewMsgTx(wire.TxVersion)
	other.AddTxIn(wire.NewTxIn(&wire.OutPoint{Hash: chainhash.Hash{7}}, nil, nil))
	other.AddTxOut(wire.NewTxOut(4, p2wpkh(4)))
	require.Empty(t, d.matches(other, other.TxHash()), "a stranger's tx matched")
	// Off: no file read or written.
	off, err := loadDecoys(t.TempDir(), 0)
	require.NoError(t, err, "off: %x", off.active())
	require.Len(t, off.active(), 0, "off: %x, %v", off.active(), err)
	added, err = off.topUp([]*wire.MsgTx{tx}, own)
	require.False(t, added, "off: added %v, %v", added, err)
	require.NoError(t, err, "off: added %v", added)
}

// TestBusyDecoyRetired: a decoy that brings DecoyBusyLimit false
// positives is retired: out of the active set, persisted as retired, the
// next persisted decoy takes its place, it is never chosen again (also
// after a restart), and a file that repeats a push across its two lists
// is corrupt.
func TestBusyDecoyRetired(t *testing.T) {
	dir := t.TempDir()
	d, err := loadDecoys(dir, 1)
	require.NoError(t, err)
	busy, spare := p2wpkh(2)[2:], p2wpkh(3)[2:]
	require.NoError(t, writeDecoys(dir, [][]byte{busy, spare}, nil))
	d, err = loadDecoys(dir, 1)
	require.NoError(t, err, "active %x", d.active())
	require.Len(t, d.active(), 1, "active %x, %v", d.active(), err)
	require.Equal(t, busy, d.active()[0], "active %x, %v", d.active(), err)
	for i := 1; i < DecoyBusyLimit; i++ {
		require.False(t, d.falsePositive(string(busy)), "busy after %d false positives, limit %d", i, DecoyBusyLimit)
	}
	require.True(t, d.falsePositive(string(busy)), "not busy after %d false positives", DecoyBusyLimit)
	ok, err := d.retire(string(busy))
	require.NoError(t, err, "retire: %v, %v", ok, err)
	require.True(t, ok, "retire: %v, %v", ok, err)
	ok, err = d.retire(string(busy))
	require.NoError(t, err, "retired twice: %v, %v", ok, err)
	require.False(t, ok, "retired twice: %v, %v", ok, err)
	require.Len(t, d.active(), 1, "after retiring: active %x, want the spare %x", d.active(), spare)
	require.Equal(t, spare, d.active()[0], "after retiring: active %x, want the spare %x", d.active(), spare)
	require.False(t, d.falsePositive(string(busy)), "a retired decoy counted as busy again")
	pay := wire.NewMsgTx(wire.TxVersion)
	pay.AddTxIn(wire.NewTxIn(&wire.OutPoint{Hash: chainhash.Hash{8}}, nil, nil))
	pay.AddTxOut(wire.NewTxOut(5, p2wpkh(2)))
	got := d.matches(pay, pay.TxHash())
	require.Equal(t, "", got, "a retired decoy still matches: %x", got)
	// Never chosen again, after a restart too.
	d2, err := loadDecoys(dir, 3)
	require.NoError(t, err)
	retired, err := ReadRetiredDecoys(dir)
	require.NoError(t, err, "retired on disk %x", retired)
	require.Len(t, retired, 1, "retired on disk %x, %v", retired, err)
	require.Equal(t, busy, retired[0], "retired on disk %x, %v", retired, err)
	_, err = d2.topUp([]*wire.MsgTx{pay}, nil)
	require.NoError(t, err)
	for _, a := range d2.active() {
		require.False(t, bytes.Equal(a, busy), "retired decoy chosen again: %x", d2.active())
	}
	require.NoError(t, writeDecoys(dir, [][]byte{busy}, [][]byte{busy}))
	_, err = ReadDecoys(dir)
	require.ErrorIs(t, err, ErrCorruptDecoys, "a push both active and retired: %v, want ErrCorruptDecoys", err)
}

// TestBusyDecoyReloadsEveryPeer: a node whose one decoy is a script
// paid in every block, with every block checked against a second peer:
// after DecoyBusyLimit false positives the decoy is retired and, at the
// next reload point (every block here), once the blocks in flight are
// answered, both peers get a filter without it (transcript.ReasonDecoyBusy), so the
// rest of the chain brings no more of its traffic; nobody is scored and
// the watcher equals the chain.
func TestBusyDecoyReloadsEveryPeer(t *testing.T) {
	const batch = 4
	w := watchtest.NewMemWatcher(1, p2wpkh(1))
	n, m := newTestManager(t, w, Config{SpotCheckEvery: 1, Decoys: 1, ReloadEvery: 1, Tuning: Tuning{BatchSize: batch, Window: batch}})
	busy := p2wpkh(0x50)
	require.NoError(t, writeDecoys(n.cfg.DataDir, [][]byte{busy[2:]}, nil))
	d, err := loadDecoys(n.cfg.DataDir, 1)
	require.NoError(t, err)
	n.decoys, m.filter = d, nil
	const blocks = 3 * DecoyBusyLimit
	chain := mineBlocks(t, n.cfg.Network, genesis(n), blocks, func(i int) []*wire.MsgTx {
		txs := []*wire.MsgTx{payTo(byte(i), 1000, busy)}
		if i == 0 {
			txs = append(txs, payTo(0xee, 5000, p2wpkh(1)))
		}
		return txs
	})
	a := addSimPeer(t, m, "sim:1", chain, 0)
	b := addSimPeer(t, m, "sim:2", chain, 1)
	for range 2 * blocks {
		a.run()
		b.run()
	}
	require.Equal(t, int32(blocks), m.synced.Height, "synced %d of %d", m.synced.Height, blocks)
	require.Equal(t, 1, m.st.DecoysRetired, "retired %d, active %d; want 1, 0", m.st.DecoysRetired, m.st.Decoys)
	require.Equal(t, 0, m.st.Decoys, "retired %d, active %d; want 1, 0", m.st.DecoysRetired, m.st.Decoys)
	// The blocks asked before the reload point bring the retired
	// decoy's traffic still (at most a window of them, false positives
	// no longer counted as decoy matches), none after the reload.
	require.Equal(t, DecoyBusyLimit, m.st.DecoyMatches, "decoy matches %d, false positives %d; want %d and %d to %d (none after the reload)", m.st.DecoyMatches, m.st.FalsePositives, DecoyBusyLimit, DecoyBusyLimit, DecoyBusyLimit+batch)
	require.GreaterOrEqual(t, m.st.FalsePositives, DecoyBusyLimit, "decoy matches %d, false positives %d; want %d and %d to %d (none after the reload)", m.st.DecoyMatches, m.st.FalsePositives, DecoyBusyLimit, DecoyBusyLimit, DecoyBusyLimit+batch)
	require.LessOrEqual(t, m.st.FalsePositives, DecoyBusyLimit+batch, "decoy matches %d, false positives %d; want %d and %d to %d (none after the reload)", m.st.DecoyMatches, m.st.FalsePositives, DecoyBusyLimit, DecoyBusyLimit, DecoyBusyLimit+batch)
	for _, s := range []*simServer{a, b} {
		var last *wire.MsgFilterLoad
		for _, msg := range s.sent {
			if fl, ok := msg.(*wire.MsgFilterLoad); ok {
				last = fl
			}
		}
		f, err := bip37.LoadFilter(last)
		require.NoError(t, err)
		require.False(t, f.Matches(busy[2:]), "%s: the last filter still holds the retired decoy", s.ps.addr)
		score := n.bans.Score(s.ps.addr)
		require.Equal(t, uint32(0), score, "%s scored %d", s.ps.addr, score)
	}
	require.Equal(t, int64(5000), w.Balance(), "watcher balance %d, %d txs; want 5000, 1", w.Balance(), len(w.Txs()))
	require.Len(t, w.Txs(), 1, "watcher balance %d, %d txs; want 5000, 1", w.Balance(), len(w.Txs()))
	retired, err := ReadRetiredDecoys(n.cfg.DataDir)
	require.NoError(t, err, "retired on disk %x", retired)
	require.Len(t, retired, 1, "retired on disk %x, %v", retired, err)
	require.Equal(t, busy[2:], retired[0], "retired on disk %x, %v", retired, err)
}
