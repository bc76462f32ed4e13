package spv

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bloomwatch/bloomwatch/spv/netparams"
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
	if err := writeDecoys(dir, want); err != nil {
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
			_, err = New(Config{Network: net, DataDir: dir, Watcher: NewMemWatcher(0, p2wpkh(1)), Decoys: 3})
			if !errors.Is(err, ErrCorruptDecoys) || !strings.Contains(err.Error(), path) {
				t.Fatalf("New: %v", err)
			}
			if raw, _ := os.ReadFile(path); string(raw) != content {
				t.Fatalf("file changed to %q", raw)
			}
			n, err := New(Config{Network: net, DataDir: dir, Watcher: NewMemWatcher(0, p2wpkh(1))})
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
		_, err := New(Config{Network: net, DataDir: t.TempDir(), Watcher: NewMemWatcher(0, p2wpkh(1)), Decoys: d})
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
	f, err := BuildFilter(Elements{Data: append([][]byte{mine[2:]}, d.active()...)}, DefaultFPRate, 7)
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
	if !d.matches(pay, pay.TxHash()) {
		t.Error("payment to a decoy not matched")
	}
	spend := wire.NewMsgTx(wire.TxVersion)
	spend.AddTxIn(wire.NewTxIn(&wire.OutPoint{Hash: pay.TxHash()}, nil, nil))
	spend.AddTxOut(wire.NewTxOut(4, p2wpkh(7)))
	if !d.matches(spend, spend.TxHash()) {
		t.Error("spend of a decoy-matched output not matched")
	}
	other := wire.NewMsgTx(wire.TxVersion)
	other.AddTxIn(wire.NewTxIn(&wire.OutPoint{Hash: chainhash.Hash{7}}, nil, nil))
	other.AddTxOut(wire.NewTxOut(4, p2wpkh(4)))
	if d.matches(other, other.TxHash()) {
		t.Error("a stranger's tx matched")
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
