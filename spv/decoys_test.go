package spv

import (
	"bytes"
	"errors"
	"github.com/bloomwatch/bloomwatch/bip37"
	"github.com/bloomwatch/bloomwatch/filterpolicy"
	"github.com/bloomwatch/bloomwatch/watch"
	"github.com/bloomwatch/bloomwatch/watch/watchtest"
	"os"
	"path/filepath"
	"strings"
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
	if err != nil || len(got) != 0 {
		t.Fatalf("no file: %x, %v", got, err)
	}
	want := [][]byte{bytes.Repeat([]byte{1}, 20), bytes.Repeat([]byte{2}, 32), {3}}
	if err := writeDecoys(dir, want, nil); err != nil {
		t.Fatal(err)
	}
	got, err = ReadDecoys(dir)
	if err != nil || len(got) != len(want) {
		t.Fatalf("read back %x, %v", got, err)
	}
	for i := range want {
		if !bytes.Equal(got[i], want[i]) {
			t.Errorf("decoy %d = %x, want %x", i, got[i], want[i])
		}
	}
	st, err := os.Stat(filepath.Join(dir, DecoyFile))
	if err != nil || st.Mode().Perm() != stateFileMode {
		t.Fatalf("mode %v, %v", st.Mode(), err)
	}
}

// TestDecoyFileCorrupt: a decoy file that cannot be read stops the node
// with ErrCorruptDecoys naming the file, and is left as it was; a node
// without decoys does not read it.
func TestDecoyFileCorrupt(t *testing.T) {
	net, err := netparams.Lookup("regtest")
	if err != nil {
		t.Fatal(err)
	}
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
			if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := ReadDecoys(dir)
			if !errors.Is(err, ErrCorruptDecoys) || !strings.Contains(err.Error(), path) {
				t.Fatalf("read: %v", err)
			}
			_, err = New(Config{Network: net, DataDir: dir, Watcher: watchtest.NewMemWatcher(0, p2wpkh(1)), Decoys: 3})
			if !errors.Is(err, ErrCorruptDecoys) || !strings.Contains(err.Error(), path) {
				t.Fatalf("New: %v", err)
			}
			if raw, _ := os.ReadFile(path); string(raw) != content {
				t.Fatalf("file changed to %q", raw)
			}
			n, err := New(Config{Network: net, DataDir: dir, Watcher: watchtest.NewMemWatcher(0, p2wpkh(1))})
			if err != nil {
				t.Fatalf("New without decoys: %v", err)
			}
			if err := n.Stop(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestConfigDecoysRange: Decoys outside [0, MaxDecoys] is a bad config.
func TestConfigDecoysRange(t *testing.T) {
	net, err := netparams.Lookup("regtest")
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []int{-1, MaxDecoys + 1} {
		_, err := New(Config{Network: net, DataDir: t.TempDir(), Watcher: watchtest.NewMemWatcher(0, p2wpkh(1)), Decoys: d})
		if !errors.Is(err, ErrBadConfig) {
			t.Errorf("Decoys %d: %v", d, err)
		}
	}
}

// TestDecoysTopUpAndMatch: decoys come from the watcher's transactions
// (never its own elements), persist, stop at the maximum, are kept when
// the maximum is lowered, and their matches (a push, or a spend of a
// decoy-matched output) are recognised.
func TestDecoysTopUpAndMatch(t *testing.T) {
	dir := t.TempDir()
	d, err := loadDecoys(dir, 2)
	if err != nil {
		t.Fatal(err)
	}
	mine := p2wpkh(1)
	tx := wire.NewMsgTx(wire.TxVersion)
	tx.AddTxIn(wire.NewTxIn(&wire.OutPoint{Hash: chainhash.Hash{9}}, nil, nil))
	tx.AddTxOut(wire.NewTxOut(1, mine))
	tx.AddTxOut(wire.NewTxOut(1, p2wpkh(2)))
	tx.AddTxOut(wire.NewTxOut(1, p2wpkh(3)))
	tx.AddTxOut(wire.NewTxOut(1, p2wpkh(4)))
	own := func(p []byte) bool { return bytes.Equal(p, mine[2:]) }
	added, err := d.topUp([]*wire.MsgTx{tx}, own)
	if err != nil || !added {
		t.Fatalf("top up: %v %v", added, err)
	}
	want := [][]byte{p2wpkh(2)[2:], p2wpkh(3)[2:]}
	onDisk, err := ReadDecoys(dir)
	if err != nil || len(onDisk) != 2 || !bytes.Equal(onDisk[0], want[0]) || !bytes.Equal(onDisk[1], want[1]) {
		t.Fatalf("persisted %x, %v; want %x", onDisk, err, want)
	}
	if added, err := d.topUp([]*wire.MsgTx{tx}, own); added || err != nil {
		t.Fatalf("full: added %v, %v", added, err)
	}
	// The same decoys after a restart; fewer with a lower maximum, the
	// file unchanged.
	again, err := loadDecoys(dir, 1)
	if err != nil || len(again.active()) != 1 || !bytes.Equal(again.active()[0], want[0]) {
		t.Fatalf("reloaded %x, %v", again.active(), err)
	}
	if got, _ := ReadDecoys(dir); len(got) != 2 {
		t.Fatalf("lowering the maximum rewrote the file: %x", got)
	}
	// A filter built with them holds them.
	f, err := filterpolicy.BuildFilter(watch.Elements{Data: append([][]byte{mine[2:]}, d.active()...)}, filterpolicy.DefaultFPRate, 7)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range want {
		if !f.Matches(e) {
			t.Errorf("filter lacks decoy %x", e)
		}
	}
	// Matches: a payment to a decoy, then its spend; not a stranger's.
	pay := wire.NewMsgTx(wire.TxVersion)
	pay.AddTxIn(wire.NewTxIn(&wire.OutPoint{Hash: chainhash.Hash{8}}, nil, nil))
	pay.AddTxOut(wire.NewTxOut(5, p2wpkh(3)))
	if got := d.matches(pay, pay.TxHash()); got != string(want[1]) {
		t.Errorf("payment to a decoy matched %x, want %x", got, want[1])
	}
	spend := wire.NewMsgTx(wire.TxVersion)
	spend.AddTxIn(wire.NewTxIn(&wire.OutPoint{Hash: pay.TxHash()}, nil, nil))
	spend.AddTxOut(wire.NewTxOut(4, p2wpkh(7)))
	if got := d.matches(spend, spend.TxHash()); got != string(want[1]) {
		t.Errorf("spend of a decoy-matched output matched %x, want %x", got, want[1])
	}
	other := wire.NewMsgTx(wire.TxVersion)
	other.AddTxIn(wire.NewTxIn(&wire.OutPoint{Hash: chainhash.Hash{7}}, nil, nil))
	other.AddTxOut(wire.NewTxOut(4, p2wpkh(4)))
	if got := d.matches(other, other.TxHash()); got != "" {
		t.Errorf("a stranger's tx matched %x", got)
	}
	// Off: no file read or written.
	off, err := loadDecoys(t.TempDir(), 0)
	if err != nil || len(off.active()) != 0 {
		t.Fatalf("off: %x, %v", off.active(), err)
	}
	if added, err := off.topUp([]*wire.MsgTx{tx}, own); added || err != nil {
		t.Fatalf("off: added %v, %v", added, err)
	}
}

// TestBusyDecoyRetired: a decoy that brings DecoyBusyLimit false
// positives is retired: out of the active set, persisted as retired, the
// next persisted decoy takes its place, it is never chosen again (also
// after a restart), and a file that repeats a push across its two lists
// is corrupt.
func TestBusyDecoyRetired(t *testing.T) {
	dir := t.TempDir()
	d, err := loadDecoys(dir, 1)
	if err != nil {
		t.Fatal(err)
	}
	busy, spare := p2wpkh(2)[2:], p2wpkh(3)[2:]
	if err := writeDecoys(dir, [][]byte{busy, spare}, nil); err != nil {
		t.Fatal(err)
	}
	if d, err = loadDecoys(dir, 1); err != nil || len(d.active()) != 1 || !bytes.Equal(d.active()[0], busy) {
		t.Fatalf("active %x, %v", d.active(), err)
	}
	for i := 1; i < DecoyBusyLimit; i++ {
		if d.falsePositive(string(busy)) {
			t.Fatalf("busy after %d false positives, limit %d", i, DecoyBusyLimit)
		}
	}
	if !d.falsePositive(string(busy)) {
		t.Fatalf("not busy after %d false positives", DecoyBusyLimit)
	}
	if ok, err := d.retire(string(busy)); !ok || err != nil {
		t.Fatalf("retire: %v, %v", ok, err)
	}
	if ok, err := d.retire(string(busy)); ok || err != nil {
		t.Fatalf("retired twice: %v, %v", ok, err)
	}
	if len(d.active()) != 1 || !bytes.Equal(d.active()[0], spare) {
		t.Fatalf("after retiring: active %x, want the spare %x", d.active(), spare)
	}
	if d.falsePositive(string(busy)) {
		t.Error("a retired decoy counted as busy again")
	}
	pay := wire.NewMsgTx(wire.TxVersion)
	pay.AddTxIn(wire.NewTxIn(&wire.OutPoint{Hash: chainhash.Hash{8}}, nil, nil))
	pay.AddTxOut(wire.NewTxOut(5, p2wpkh(2)))
	if got := d.matches(pay, pay.TxHash()); got != "" {
		t.Errorf("a retired decoy still matches: %x", got)
	}
	// Never chosen again, after a restart too.
	d2, err := loadDecoys(dir, 3)
	if err != nil {
		t.Fatal(err)
	}
	retired, err := ReadRetiredDecoys(dir)
	if err != nil || len(retired) != 1 || !bytes.Equal(retired[0], busy) {
		t.Fatalf("retired on disk %x, %v", retired, err)
	}
	if _, err := d2.topUp([]*wire.MsgTx{pay}, nil); err != nil {
		t.Fatal(err)
	}
	for _, a := range d2.active() {
		if bytes.Equal(a, busy) {
			t.Fatalf("retired decoy chosen again: %x", d2.active())
		}
	}
	if err := writeDecoys(dir, [][]byte{busy}, [][]byte{busy}); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadDecoys(dir); !errors.Is(err, ErrCorruptDecoys) {
		t.Fatalf("a push both active and retired: %v, want ErrCorruptDecoys", err)
	}
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
	if err := writeDecoys(n.cfg.DataDir, [][]byte{busy[2:]}, nil); err != nil {
		t.Fatal(err)
	}
	d, err := loadDecoys(n.cfg.DataDir, 1)
	if err != nil {
		t.Fatal(err)
	}
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
	if m.synced.Height != blocks {
		t.Fatalf("synced %d of %d", m.synced.Height, blocks)
	}
	if m.st.DecoysRetired != 1 || m.st.Decoys != 0 {
		t.Fatalf("retired %d, active %d; want 1, 0", m.st.DecoysRetired, m.st.Decoys)
	}
	// The blocks asked before the reload point bring the retired
	// decoy's traffic still (at most a window of them, false positives
	// no longer counted as decoy matches), none after the reload.
	if m.st.DecoyMatches != DecoyBusyLimit || m.st.FalsePositives < DecoyBusyLimit || m.st.FalsePositives > DecoyBusyLimit+batch {
		t.Errorf("decoy matches %d, false positives %d; want %d and %d to %d (none after the reload)",
			m.st.DecoyMatches, m.st.FalsePositives, DecoyBusyLimit, DecoyBusyLimit, DecoyBusyLimit+batch)
	}
	for _, s := range []*simServer{a, b} {
		var last *wire.MsgFilterLoad
		for _, msg := range s.sent {
			if fl, ok := msg.(*wire.MsgFilterLoad); ok {
				last = fl
			}
		}
		f, err := bip37.LoadFilter(last)
		if err != nil {
			t.Fatal(err)
		}
		if f.Matches(busy[2:]) {
			t.Errorf("%s: the last filter still holds the retired decoy", s.ps.addr)
		}
		if score := n.bans.Score(s.ps.addr); score != 0 {
			t.Errorf("%s scored %d", s.ps.addr, score)
		}
	}
	if w.Balance() != 5000 || len(w.Txs()) != 1 {
		t.Errorf("watcher balance %d, %d txs; want 5000, 1", w.Balance(), len(w.Txs()))
	}
	retired, err := ReadRetiredDecoys(n.cfg.DataDir)
	if err != nil || len(retired) != 1 || !bytes.Equal(retired[0], busy[2:]) {
		t.Errorf("retired on disk %x, %v", retired, err)
	}
}
