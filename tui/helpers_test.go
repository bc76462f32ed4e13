package tui

import (
	"fmt"
	"os"
	"sync"
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
	"github.com/bloomwatch/bloomwatch/watch"
)

// t0 is the fixed time of the scripted session.
var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// fixedNow is the fixed clock of the golden tests: 1.5 s after the last
// scripted block.
func fixedNow() time.Time { return t0.Add(100*100*time.Millisecond + 1500*time.Millisecond) }

// txid returns a deterministic transaction id.
func txid(i int) chainhash.Hash { return chainhash.DoubleHashH([]byte(fmt.Sprint("tx", i))) }

// TestMain pins the local time zone: the log pane stamps event times in
// local time, the golden files in UTC.
func TestMain(m *testing.M) {
	time.Local = time.UTC
	os.Exit(m.Run())
}

// scriptPeer serves every scripted transaction.
const scriptPeer = "127.0.0.1:18444"

// program returns a deterministic 20-byte witness program.
func program(tag string, i int) []byte {
	h := chainhash.DoubleHashH([]byte(fmt.Sprint(tag, i)))
	return h[:20]
}

// p2wpkh returns the output script paying a witness program.
func p2wpkh(prog []byte) []byte {
	return append([]byte{txscript.OP_0, txscript.OP_DATA_20}, prog...)
}

// walletProgram is the witness program of regtestAddress(n).
func walletProgram(n byte) []byte {
	var h [20]byte
	h[0], h[19] = n, 0x77
	return h[:]
}

// scriptTx builds a transaction spending op with one signature push and
// paying the scripts.
func scriptTx(op wire.OutPoint, lock uint32, outs ...*wire.TxOut) *wire.MsgTx {
	tx := wire.NewMsgTx(2)
	tx.AddTxIn(wire.NewTxIn(&op, nil, [][]byte{{0x30, 0x44}, {0x02, byte(lock)}}))
	for _, o := range outs {
		tx.AddTxOut(o)
	}
	tx.LockTime = lock
	return tx
}

// scriptFilter builds the scripted filter holding the two wallet
// programs and n-2 other elements, with a fixed tweak.
func scriptFilter(n int) *bip37.Filter {
	f, err := bip37.NewFilter(50, 0.02, 0x5eed1234, bip37.UpdateAll)
	if err != nil {
		panic(err)
	}
	f.Add(walletProgram(1))
	f.Add(walletProgram(2))
	for i := 2; i < n; i++ {
		f.Add(program("element", i))
	}
	return f
}

// falsePositiveProgram returns the first program after *next that the
// filter matches although it is not the wallet's.
func falsePositiveProgram(f *bip37.Filter, next *int) []byte {
	for {
		*next++
		p := program("other", *next)
		if f.Matches(p) {
			return p
		}
	}
}

// matched builds a MatchedTx event explained against the filter the peer
// holds (f, the record seq).
func matched(at spv.At, tx *wire.MsgTx, height int32, relevant bool, amount int64, f *bip37.Filter, seq uint64) spv.MatchedTx {
	e := spv.MatchedTx{At: at, Txid: tx.TxHash(), Height: height, Relevant: relevant, FalsePositive: !relevant,
		Amount: amount, Tx: tx, Peer: scriptPeer, FilterSeq: seq, FilterFPRate: f.CurrentFPRate()}
	if why, ok := f.Explain(tx); ok {
		e.Why = &why
	}
	return e
}

// filterLoaded builds the FilterLoaded event of a filter as sent.
func filterLoaded(at spv.At, f *bip37.Filter, seq uint64, height int32, reason string, elements, loads int) spv.FilterLoaded {
	return spv.FilterLoaded{At: at, Peer: scriptPeer, Reason: reason, FilterInfo: spv.FilterInfo{Elements: elements, Bytes: f.Size(),
		HashFuncs: f.HashFuncs(), Tweak: f.Tweak(), Flags: "all", FPRate: f.FPRate(float64(elements)), Loads: loads, Seq: seq},
		Record: transcript.Record{Seq: seq, Time: at.Time, Peer: scriptPeer, Height: height,
			Kind: transcript.KindFilterLoad, Filter: f.Serialize(), Reason: reason}}
}

var (
	scriptOnce sync.Once
	scriptEvs  []spv.Event
)

// scriptedEvents is a node session: two peers, headers to 120, the first
// filter (40 elements), 100 blocks at 10 blocks/s with a wallet
// transaction every 7th block (payments to the wallet's second address,
// every other one a spend of the previous payment) and a false positive
// every 3rd (a payment to a program that happens to match the filter), a
// reload every 10th block with one element more (the same tweak; at
// block 60 for FP drift, else for a new key) and one mempool payment to
// the first address. Every transaction is real and explained against
// the filter as the peer held it.
func scriptedEvents() []spv.Event {
	scriptOnce.Do(func() { scriptEvs = buildScript() })
	return scriptEvs
}

// buildScript builds scriptedEvents' session.
func buildScript() []spv.Event {
	at := func(d time.Duration) spv.At { return spv.At{Time: t0.Add(d)} }
	f := scriptFilter(40)
	var seq uint64
	ev := []spv.Event{
		spv.PeerConnected{At: at(0), Peer: spv.PeerInfo{Addr: scriptPeer, UserAgent: "/btcd:0.24.2/",
			Services: wire.SFNodeNetwork | wire.SFNodeBloom | wire.SFNodeWitness, StartHeight: 120, LastBlock: 120,
			PingTime: 3 * time.Millisecond, Download: true, Transport: "v2"}},
		spv.PeerConnected{At: at(0), Peer: spv.PeerInfo{Addr: "127.0.0.1:18445", UserAgent: "/btcd:0.24.2/",
			Services: wire.SFNodeNetwork | wire.SFNodeBloom, StartHeight: 119, PingTime: 41 * time.Millisecond, BanScore: 10, Transport: "v1"}},
		spv.HeadersProgress{At: at(0), Height: 120, PeerHeight: 120},
		filterLoaded(at(0), f, seq, 0, transcript.ReasonInitial, 40, 1),
	}
	mirror := f.Clone() // the peer's copy: UPDATE_ALL adds matched outpoints
	next, elems := 0, 40
	fpsSoFar := func(h int32) int32 { return h / 3 } // one false positive every 3rd block, 4 txs tested a block
	var lastPay *wire.MsgTx
	nWallet := 0
	for h := int32(1); h <= 100; h++ {
		when := time.Duration(h) * 100 * time.Millisecond
		matchedN, fps := 0, 0
		if h%7 == 0 {
			nWallet++
			var tx *wire.MsgTx
			amount := int64(h) * 1_000_000
			if nWallet%2 == 0 && lastPay != nil {
				// spend the previous payment to someone else
				prev := wire.OutPoint{Hash: lastPay.TxHash(), Index: 0}
				tx = scriptTx(prev, uint32(h), wire.NewTxOut(lastPay.TxOut[0].Value-1000, p2wpkh(program("payee", int(h)))))
				amount = -lastPay.TxOut[0].Value
			} else {
				tx = scriptTx(wire.OutPoint{Hash: txid(int(h)), Index: 1}, uint32(h),
					wire.NewTxOut(amount, p2wpkh(walletProgram(2))), wire.NewTxOut(5_000_000, p2wpkh(program("change", int(h)))))
				lastPay = tx
			}
			ev = append(ev, matched(at(when), tx, h, true, amount, mirror, seq))
			mirror.MatchTxAndUpdate(tx)
			matchedN++
		}
		if h%3 == 0 {
			tx := scriptTx(wire.OutPoint{Hash: txid(1000 + int(h)), Index: 0}, uint32(h),
				wire.NewTxOut(7_000+int64(h), p2wpkh(program("payee", 1000+int(h)))),
				wire.NewTxOut(3_000, p2wpkh(falsePositiveProgram(mirror, &next))))
			ev = append(ev, matched(at(when), tx, h, false, 0, mirror, seq))
			mirror.MatchTxAndUpdate(tx)
			matchedN++
			fps++
		}
		ev = append(ev, spv.BlockProcessed{At: at(when), Height: h, Matched: matchedN, Relevant: matchedN - fps,
			FalsePositives: fps, ObservedFPRate: float64(fpsSoFar(h)) / float64(h*4), TheoreticalFPRate: mirror.FPRate(float64(elems)),
			PeerHeight: 120})
		if h%10 == 0 && h < 100 {
			reason := transcript.ReasonNewKey
			if h == 60 {
				reason = transcript.ReasonFPDrift
			}
			elems++
			f = scriptFilter(elems)
			seq++
			ev = append(ev, filterLoaded(at(when), f, seq, h, reason, elems, int(seq)+1))
			mirror = f.Clone()
		}
	}
	pay := scriptTx(wire.OutPoint{Hash: txid(5000), Index: 0}, 0, wire.NewTxOut(25_000, p2wpkh(walletProgram(1))))
	ev = append(ev, matched(at(10*time.Second), pay, -1, true, 25_000, mirror, seq))
	return ev
}

// scriptedReadings feeds a real privacy meter the transcript record of
// every filterload in scriptedEvents (ten, one tweak) against a universe
// of 10,000 candidates.
func scriptedReadings(t testing.TB) []privacy.Reading {
	m := privacy.NewMeter(privacy.MeterConfig{})
	m.SetCandidates(10_000)
	// The wallet pays its second address and is paid once at its first
	// (two on chain) of the 40 it watches.
	m.SetWallet(privacy.WalletCounts{OnChain: 2, Watched: 40, Elements: 41})
	var out []privacy.Reading
	for _, e := range scriptedEvents() {
		if fl, ok := e.(spv.FilterLoaded); ok {
			// Observed as scriptedEvents' blocks count it: a false
			// positive every third block, four transactions tested.
			h := uint64(fl.Record.Height)
			m.SetObserved(h/3, h*4)
			r, err := m.Observe(fl.Record)
			require.NoError(t, err)
			out = append(out, r)
		}
	}
	return out
}

// scriptedLog is what the logger would send: slog text lines (the one
// repeating an event is dropped, the others compacted), a line in
// another format, and one with an escape sequence.
func scriptedLog() []string {
	return []string{
		`time=03:04:05.001 level=INFO msg="peer connected" addr=127.0.0.1:18444 agent=/btcd:0.24.2/ height=120`,
		"03:04:05 INF spv: handshake done, services NODE_BLOOM",
		`time=03:04:06.250 level=INFO msg="download peer" addr=127.0.0.1:18444 height=120`,
		`time=03:04:11.000 level=INFO msg=filterload seq=8 peer=127.0.0.1:18444 reason=fp-drift elements=46`,
		`time=03:04:12.500 level=WARN msg="peer misbehaved" addr=127.0.0.1:18445 kind=unsolicited score=10`,
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
	b := &watch.FilteredBlock{Height: 1, Hash: hdr.BlockHash(), Header: hdr,
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

// walletChange is the first change a reader of w gets (every address and
// unspent output), as a session hands it to its dashboard.
func walletChange(t testing.TB, w *wallet.Wallet) wallet.ChangeResult {
	t.Helper()
	var cur wallet.ChangeCursor
	c, err := w.Changes(&cur)
	require.NoError(t, err)
	return wallet.ChangeResult{Change: c}
}

// walletFeed returns a channel holding w's first change (Config.Wallet).
func walletFeed(t testing.TB, w *wallet.Wallet) <-chan wallet.ChangeResult {
	ch := make(chan wallet.ChangeResult, 1)
	ch <- walletChange(t, w)
	return ch
}

// scriptedModel is a dashboard of w x h cells after the scripted session,
// with the real wallet's first change applied (none when wl is nil).
func scriptedModel(t testing.TB, w, h int, wl *wallet.Wallet) Model {
	m := New(Config{Network: "regtest", Now: fixedNow})
	m = feed(t, m, tea.WindowSizeMsg{Width: w, Height: h},
		eventsMsg{events: scriptedEvents()},
		readingsMsg{readings: scriptedReadings(t)},
		logMsg{lines: scriptedLog()})
	if wl != nil {
		m = feed(t, m, walletMsg{results: []wallet.ChangeResult{walletChange(t, wl)}})
	}
	return m
}
