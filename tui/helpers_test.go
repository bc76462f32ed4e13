package tui

import (
	"encoding/binary"
	"fmt"
	"testing"
	"time"

	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/txscript"
	"github.com/btcsuite/btcd/wire"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/stretchr/testify/require"

	"github.com/bloomwatch/bloomwatch/bip37"
	"github.com/bloomwatch/bloomwatch/privacy"
	"github.com/bloomwatch/bloomwatch/spv"
	"github.com/bloomwatch/bloomwatch/transcript"
	"github.com/bloomwatch/bloomwatch/wallet"
)

// Compile-time check: the real wallet is a WalletView.
var _ WalletView = (*wallet.Wallet)(nil)

// t0 is the fixed time of the scripted session.
var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// fixedNow is the fixed clock of the golden tests: 1.5 s after the last
// scripted block.
func fixedNow() time.Time { return t0.Add(100*100*time.Millisecond + 1500*time.Millisecond) }

// txid returns a deterministic transaction id.
func txid(i int) chainhash.Hash { return chainhash.DoubleHashH([]byte(fmt.Sprint("tx", i))) }

// scriptedEvents is a node session: two peers, headers to 120, the first
// filter, 100 blocks at 10 blocks/s with a wallet match every 7th block
// and a false positive every 3rd, a reload for FP drift and one mempool
// payment.
func scriptedEvents() []spv.Event {
	at := func(d time.Duration) spv.At { return spv.At{Time: t0.Add(d)} }
	ev := []spv.Event{
		spv.PeerConnected{At: at(0), Peer: spv.PeerInfo{Addr: "127.0.0.1:18444", UserAgent: "/btcd:0.24.2/",
			Services: wire.SFNodeNetwork | wire.SFNodeBloom | wire.SFNodeWitness, StartHeight: 120, LastBlock: 120,
			PingTime: 3 * time.Millisecond, Download: true}},
		spv.PeerConnected{At: at(0), Peer: spv.PeerInfo{Addr: "127.0.0.1:18445", UserAgent: "/btcd:0.24.2/",
			Services: wire.SFNodeNetwork | wire.SFNodeBloom, StartHeight: 119, PingTime: 41 * time.Millisecond, BanScore: 10}},
		spv.HeadersProgress{At: at(0), Height: 120, PeerHeight: 120},
		spv.FilterLoaded{At: at(0), Peer: "127.0.0.1:18444", Reason: spv.ReasonInitial, Elements: 40, Bytes: 96,
			HashFuncs: 11, Tweak: 0x5eed1234, Flags: "all", FPRate: 1.2e-4, Loads: 1},
	}
	n := 0
	for h := int32(1); h <= 100; h++ {
		when := time.Duration(h) * 100 * time.Millisecond
		matched, fps := 0, 0
		if h%7 == 0 {
			n++
			ev = append(ev, spv.MatchedTx{At: at(when), Txid: txid(n), Height: h, Relevant: true, Amount: int64(h) * 1_000_000})
			matched++
		}
		if h%3 == 0 {
			n++
			ev = append(ev, spv.MatchedTx{At: at(when), Txid: txid(n), Height: h, FalsePositive: true})
			matched++
			fps++
		}
		ev = append(ev, spv.BlockProcessed{At: at(when), Height: h, Matched: matched, Relevant: matched - fps,
			FalsePositives: fps, ObservedFPRate: 2.5e-3, TheoreticalFPRate: 3.1e-4, PeerHeight: 120})
		if h == 60 {
			ev = append(ev, spv.FilterLoaded{At: at(when), Peer: "127.0.0.1:18444", Reason: spv.ReasonFPDrift, Elements: 46,
				Bytes: 96, HashFuncs: 11, Tweak: 0x5eed1234, Flags: "all", FPRate: 1.9e-4, Loads: 2})
		}
	}
	n++
	ev = append(ev, spv.MatchedTx{At: at(10 * time.Second), Txid: txid(n), Height: -1, Relevant: true, Amount: 25_000})
	return ev
}

// scriptedReadings feeds a real privacy meter six filterloads: the first
// filter, two more addresses with the same tweak, a reconnect with a
// fresh tweak, and two manual reloads with fresh tweaks.
func scriptedReadings(t testing.TB) []privacy.Reading {
	m := privacy.NewMeter(privacy.MeterConfig{})
	m.SetCandidates(1_000_000)
	steps := []struct {
		n      int
		tweak  uint32
		reason string
	}{{20, 1, "initial"}, {21, 1, "elements"}, {22, 1, "elements"}, {22, 2, "reconnect"}, {22, 3, "manual"}, {22, 4, "manual"}}
	var out []privacy.Reading
	for i, s := range steps {
		f, err := bip37.NewFilter(64, 0.01, s.tweak, bip37.UpdateAll)
		require.NoError(t, err)
		for e := 0; e < s.n; e++ {
			var b [4]byte
			binary.BigEndian.PutUint32(b[:], uint32(e))
			f.Add(b[:])
		}
		r, err := m.Observe(transcript.Record{Seq: uint64(i), Time: t0.Add(time.Duration(i) * time.Second),
			Peer: "127.0.0.1:18444", Height: int32(i * 10), Kind: transcript.KindFilterLoad, Filter: f.Serialize(), Reason: s.reason})
		require.NoError(t, err)
		out = append(out, r)
	}
	return out
}

// scriptedLog is what the logger would send.
func scriptedLog() []string {
	return []string{
		"03:04:05 INF spv: connecting to 127.0.0.1:18444",
		"03:04:05 INF spv: handshake done, services NODE_BLOOM",
		"03:04:15 WRN spv: filter fp rate drifted past 10x target\x1b[2J",
	}
}

// regtestAddress returns a P2WPKH regtest address and its script.
func regtestAddress(t testing.TB, n byte) (string, []byte) {
	var h [20]byte
	h[0], h[19] = n, 0x77
	a, err := btcutil.NewAddressWitnessPubKeyHash(h[:], &chaincfg.RegressionNetParams)
	require.NoError(t, err)
	s, err := txscript.PayToAddrScript(a)
	require.NoError(t, err)
	return a.EncodeAddress(), s
}

// newTestWallet creates a real watch-only wallet watching two addresses
// and applies one block paying 0.5 BTC to the first one and one
// transaction paying someone else (a false positive).
func newTestWallet(t testing.TB) *wallet.Wallet {
	a1, s1 := regtestAddress(t, 1)
	a2, _ := regtestAddress(t, 2)
	_, other := regtestAddress(t, 9)
	w, err := wallet.Create(t.TempDir(), wallet.CreateConfig{Network: "regtest", Addresses: []string{a1, a2}})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, w.Close()) })
	pay := func(script []byte, v int64, lock uint32) *wire.MsgTx {
		tx := wire.NewMsgTx(wire.TxVersion)
		tx.AddTxIn(wire.NewTxIn(wire.NewOutPoint(&chainhash.Hash{0xab, byte(lock)}, 0), nil, [][]byte{{0x30}, {0x02}}))
		tx.AddTxOut(wire.NewTxOut(v, script))
		tx.LockTime = lock
		return tx
	}
	hdr := wire.BlockHeader{Version: 4, PrevBlock: chainhash.Hash{0x01}, Timestamp: t0, Bits: 0x207fffff}
	b := &spv.FilteredBlock{Height: 1, Hash: hdr.BlockHash(), Header: hdr,
		Txs: []*wire.MsgTx{pay(s1, 50_000_000, 1), pay(other, 7_000, 2)}, TxIndexes: []uint32{1, 2}, TotalTxs: 3}
	res, err := w.ApplyBlock(b)
	require.NoError(t, err)
	require.Len(t, res.Relevant, 1)
	require.NoError(t, w.Flush())
	return w
}

// feed applies msgs to m as the program would, returning the new model.
func feed(t testing.TB, m Model, msgs ...tea.Msg) Model {
	for _, msg := range msgs {
		nm, _ := m.Update(msg)
		m = nm.(Model)
	}
	return m
}

// scriptedModel is a dashboard of w x h cells after the scripted session,
// with the real wallet polled once.
func scriptedModel(t testing.TB, w, h int, wv WalletView) Model {
	m := New(Config{Network: "regtest", Wallet: wv, Now: fixedNow})
	m = feed(t, m, tea.WindowSizeMsg{Width: w, Height: h},
		eventsMsg{events: scriptedEvents()},
		readingsMsg{readings: scriptedReadings(t)},
		logMsg{lines: scriptedLog()})
	if wv != nil {
		m = feed(t, m, pollWallet(wv)())
	}
	return m
}
