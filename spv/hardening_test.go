package spv

import (
	"fmt"
	"math/rand"
	"testing"
	"time"

	"github.com/bloomwatch/bloomwatch/bip37"
	"github.com/bloomwatch/bloomwatch/filterpolicy"
	"github.com/bloomwatch/bloomwatch/watch/watchtest"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/stretchr/testify/require"
)

// omitOne returns a tamper that hides one matched transaction per block,
// chosen by pick among the matched txs (nil: hide none), behind a valid
// proof, and records what it hid.
func omitOne(blocks map[chainhash.Hash]*wire.MsgBlock, filter func() *bip37.Filter, pick func(height int, txs []*wire.MsgTx) *wire.MsgTx, hidden map[chainhash.Hash]bool) func(*wire.MsgMerkleBlock, []*wire.MsgTx) (*wire.MsgMerkleBlock, []*wire.MsgTx) {
	return func(mb *wire.MsgMerkleBlock, txs []*wire.MsgTx) (*wire.MsgMerkleBlock, []*wire.MsgTx) {
		victim := pick(0, txs)
		if victim == nil {
			return mb, txs
		}
		id := victim.TxHash()
		hidden[id] = true
		b := blocks[mb.Header.BlockHash()]
		keep := make(map[chainhash.Hash]bool)
		var out []*wire.MsgTx
		for _, tx := range txs {
			if tx.TxHash() != id {
				keep[tx.TxHash()] = true
				out = append(out, tx)
			}
		}
		return bip37.BuildMerkleBlock(b, func(_ int, tx *wire.MsgTx) bool { return keep[tx.TxHash()] }), out
	}
}

// walletChain mines n blocks; block i pays the watcher (script p2wpkh(1))
// and, from the second block on, spends the previous block's payment, so
// omissions of payments and of spends both occur.
func walletChain(t *testing.T, n *Node, blocks int) []*wire.MsgBlock {
	var prev *wire.MsgTx
	return mineBlocks(t, n.cfg.Network, genesis(n), blocks, func(i int) []*wire.MsgTx {
		pay := payTo(byte(i), int64(1000+i), p2wpkh(1))
		out := []*wire.MsgTx{pay}
		if prev != nil {
			spend := wire.NewMsgTx(2)
			spend.AddTxIn(wire.NewTxIn(&wire.OutPoint{Hash: prev.TxHash()}, nil, [][]byte{{1}}))
			spend.AddTxOut(wire.NewTxOut(1, p2wpkh(0x77)))
			out = append(out, spend)
		}
		prev = pay
		return out
	})
}

func TestCheckEveryBlockCatchesEveryOmission(t *testing.T) {
	// A liar hides one random wallet transaction (a payment or a spend)
	// in a block; with every block checked against an honest second
	// peer, each omission is caught, the liar banned and the watcher
	// ends equal to the chain. Each run uses a fresh liar address.
	const runs = 40
	var misses []string
	for run := range runs {
		r := rand.New(rand.NewSource(int64(run)))
		w := watchtest.NewMemWatcher(1, p2wpkh(1))
		n, m := newTestManager(t, w, Config{SpotCheckEvery: 1})
		chain := walletChain(t, n, 8)
		target := 1 + r.Intn(len(chain)-1) // the block whose answer lies
		hidden := map[chainhash.Hash]bool{}
		liar := addSimPeer(t, m, "liar:1", chain, 0)
		block := 0
		liar.tamper = omitOne(liar.blocks, func() *bip37.Filter { return liar.filter }, func(_ int, txs []*wire.MsgTx) *wire.MsgTx {
			block++
			if block != target || len(txs) == 0 {
				return nil
			}
			return txs[r.Intn(len(txs))]
		}, hidden)
		honest := addSimPeer(t, m, "honest:1", chain, 1)
		for range 6 {
			liar.run()
			honest.run()
		}
		_, banned := n.bans.IsBanned("liar:1")
		txs := len(w.Txs())
		if len(hidden) != 1 || !banned || txs != 2*len(chain)-1 || w.Balance() != int64(1000+len(chain)-1) {
			misses = append(misses, fmt.Sprintf("run %d: hid %d, banned %v, watcher %d txs (want %d), balance %d", run, len(hidden), banned, txs, 2*len(chain)-1, w.Balance()))
		}
	}
	require.Empty(t, misses, "%d of %d omissions missed", len(misses), runs)
}

func TestFullBlockCheckCatchesOmissionWithOnePeer(t *testing.T) {
	w := watchtest.NewMemWatcher(1, p2wpkh(1))
	n, m := newTestManager(t, w, Config{FullBlockEvery: 1})
	chain := walletChain(t, n, 4)
	liar := addSimPeer(t, m, "liar:1", chain, 0)
	hidden := map[chainhash.Hash]bool{}
	liar.tamper = omitOne(liar.blocks, func() *bip37.Filter { return liar.filter }, func(_ int, txs []*wire.MsgTx) *wire.MsgTx {
		if len(txs) == 0 {
			return nil
		}
		return txs[len(txs)-1]
	}, hidden)
	liar.run()
	_, banned := n.bans.IsBanned("liar:1")
	require.True(t, banned, "not caught: omissions %d, full-block checks %d, bans %+v", m.st.Omissions, m.st.FullBlockChecks, n.bans.Bans())
	require.NotEqual(t, 0, m.st.Omissions, "not caught: omissions %d, full-block checks %d, bans %+v", m.st.Omissions, m.st.FullBlockChecks, n.bans.Bans())
	require.NotEqual(t, 0, m.st.FullBlockChecks, "not caught: omissions %d, full-block checks %d, bans %+v", m.st.Omissions, m.st.FullBlockChecks, n.bans.Bans())
	// An honest peer joins: the watcher ends equal to the chain.
	honest := addSimPeer(t, m, "honest:1", chain, 1)
	honest.run()
	require.Len(t, w.Txs(), 2*len(chain)-1, "watcher has %d txs, want %d", len(w.Txs()), 2*len(chain)-1)
}

func TestFullBlockCheckCatchesUnderstatedCount(t *testing.T) {
	// The merkle root does not commit to the transaction count: a
	// merkleblock claiming one transaction whose only hash is the root
	// verifies with no match at all, hiding every wallet transaction of
	// the block. The full block shows the real count.
	w := watchtest.NewMemWatcher(1, p2wpkh(1))
	n, m := newTestManager(t, w, Config{FullBlockEvery: 1})
	chain := walletChain(t, n, 2)
	liar := addSimPeer(t, m, "liar:1", chain, 0)
	liar.tamper = func(mb *wire.MsgMerkleBlock, _ []*wire.MsgTx) (*wire.MsgMerkleBlock, []*wire.MsgTx) {
		root := mb.Header.MerkleRoot
		return &wire.MsgMerkleBlock{Header: mb.Header, Transactions: 1, Hashes: []*chainhash.Hash{&root}, Flags: []byte{0}}, nil
	}
	liar.run()
	_, banned := n.bans.IsBanned("liar:1")
	require.True(t, banned, "an understated transaction count went unnoticed: omissions %d, bans %+v", m.st.Omissions, n.bans.Bans())
	require.NotEqual(t, 0, m.st.Omissions, "an understated transaction count went unnoticed: omissions %d, bans %+v", m.st.Omissions, n.bans.Bans())
}

func TestFullBlockNotServedIsInconclusive(t *testing.T) {
	w := watchtest.NewMemWatcher(1, p2wpkh(1))
	n, m := newTestManager(t, w, Config{FullBlockEvery: 1})
	chain := walletChain(t, n, 3)
	s := addSimPeer(t, m, "sim:1", chain, 0)
	s.noFullBlocks = true
	s.run()
	_, banned := n.bans.IsBanned("sim:1")
	require.False(t, banned, "a peer that does not serve full blocks was banned or blamed: %+v", n.bans.Bans())
	require.Equal(t, 0, m.st.Omissions, "a peer that does not serve full blocks was banned or blamed: %+v", n.bans.Bans())
	require.Equal(t, int32(3), m.synced.Height, "synced %d with %d txs", m.synced.Height, len(w.Txs()))
	require.Len(t, w.Txs(), 5, "synced %d with %d txs", m.synced.Height, len(w.Txs()))
}

func TestDriftFromRelayedTxIsNotBanned(t *testing.T) {
	// The server relayed a matching mempool tx T (inserting its
	// outpoint, as btcd and Core do when they decide to relay) and the
	// node could not fetch it (notfound: mined meanwhile). A block then
	// holds S spending T's output: the server sends S, the mirror does
	// not match it. That is drift, not a lie: never a ban, however often.
	w := watchtest.NewMemWatcher(1, p2wpkh(1))
	n, m := newTestManager(t, w, Config{})
	var relayed []*wire.MsgTx
	chain := mineBlocks(t, n.cfg.Network, genesis(n), 8, func(i int) []*wire.MsgTx {
		t := payTo(byte(i+50), 3, p2wpkh(0x42))
		s := wire.NewMsgTx(2)
		s.AddTxIn(wire.NewTxIn(&wire.OutPoint{Hash: t.TxHash()}, nil, nil))
		s.AddTxOut(wire.NewTxOut(1, p2wpkh(0x43)))
		relayed = append(relayed, t)
		return []*wire.MsgTx{s, payTo(byte(i), 7, p2wpkh(1))}
	})
	sim := addSimPeer(t, m, "sim:1", nil, 0)
	sim.run()
	for _, tx := range relayed {
		id := tx.TxHash()
		sim.filter.AddOutPoint(&wire.OutPoint{Hash: id}) // the server's relay insertion
		inv := wire.NewMsgInv()
		_ = inv.AddInvVect(wire.NewInvVect(wire.InvTypeTx, &id))
		sim.deliver(inv) // announced; MSG_TX will get notfound
	}
	sim.setChain(chain)
	ann := wire.NewMsgInv()
	tip := chain[len(chain)-1].BlockHash()
	_ = ann.AddInvVect(wire.NewInvVect(wire.InvTypeBlock, &tip))
	sim.deliver(ann)
	sim.run()
	_, banned := n.bans.IsBanned("sim:1")
	require.False(t, banned, "honest drift scored %d / banned: %+v", n.bans.Score("sim:1"), n.bans.Bans())
	require.Equal(t, uint32(0), n.bans.Score("sim:1"), "honest drift scored %d / banned: %+v", n.bans.Score("sim:1"), n.bans.Bans())
	require.Equal(t, len(relayed), m.st.DriftDropped, "drift dropped %d (want %d), synced %d, %d txs", m.st.DriftDropped, len(relayed), m.synced.Height, len(w.Txs()))
	require.Equal(t, int32(8), m.synced.Height, "drift dropped %d (want %d), synced %d, %d txs", m.st.DriftDropped, len(relayed), m.synced.Height, len(w.Txs()))
	require.Len(t, w.Txs(), 8, "drift dropped %d (want %d), synced %d, %d txs", m.st.DriftDropped, len(relayed), m.synced.Height, len(w.Txs()))
}

func TestUnexplainedUnmatchedTxIsScored(t *testing.T) {
	// The same blocks with insertions nothing announced: nothing
	// explains S, so it is the bitcoinj 876 injection and is scored.
	w := watchtest.NewMemWatcher(1, p2wpkh(1))
	n, m := newTestManager(t, w, Config{})
	var hidden []chainhash.Hash
	chain := mineBlocks(t, n.cfg.Network, genesis(n), 2, func(i int) []*wire.MsgTx {
		prev := chainhash.Hash{byte(i), 9}
		hidden = append(hidden, prev)
		s := wire.NewMsgTx(2)
		s.AddTxIn(wire.NewTxIn(&wire.OutPoint{Hash: prev}, nil, nil))
		s.AddTxOut(wire.NewTxOut(1, p2wpkh(0x43)))
		return []*wire.MsgTx{s}
	})
	sim := addSimPeer(t, m, "sim:1", nil, 0)
	sim.run()
	for i := range hidden {
		sim.filter.AddOutPoint(&wire.OutPoint{Hash: hidden[i]})
	}
	sim.setChain(chain)
	ann := wire.NewMsgInv()
	tip := chain[len(chain)-1].BlockHash()
	_ = ann.AddInvVect(wire.NewInvVect(wire.InvTypeBlock, &tip))
	sim.deliver(ann)
	sim.run()
	require.Equal(t, 2, m.st.Dropped, "dropped %d, drift %d, score %d: an unexplained unmatched tx must be dropped and scored", m.st.Dropped, m.st.DriftDropped, n.bans.Score("sim:1"))
	require.Equal(t, 0, m.st.DriftDropped, "dropped %d, drift %d, score %d: an unexplained unmatched tx must be dropped and scored", m.st.Dropped, m.st.DriftDropped, n.bans.Score("sim:1"))
	require.NotEqual(t, uint32(0), n.bans.Score("sim:1"), "dropped %d, drift %d, score %d: an unexplained unmatched tx must be dropped and scored", m.st.Dropped, m.st.DriftDropped, n.bans.Score("sim:1"))
}

func TestCappedFilterIsShownAndNotReloadedForever(t *testing.T) {
	// 25,000 scripts at 1e-4: the capacity (65,536) needs about 157 KB,
	// BIP37 caps the filter at 36,000 bytes. The node says so, and the
	// fill-driven reload compares the filter with the rate it could reach,
	// not with the target it cannot: no reload at every block.
	scripts := make([][]byte, 25_000)
	for i := range scripts {
		scripts[i] = p2wpkh(byte(i))
		scripts[i][3] = byte(i >> 8)
	}
	w := watchtest.NewMemWatcher(1, scripts...)
	n, m := newTestManager(t, w, Config{})
	sub := n.Subscribe()
	defer sub.Cancel()
	chain := mineBlocks(t, n.cfg.Network, genesis(n), 20, func(i int) []*wire.MsgTx {
		return []*wire.MsgTx{payTo(byte(i), 5, scripts[i*7])}
	})
	s := addSimPeer(t, m, "sim:1", chain, 0)
	s.run()
	require.Equal(t, int32(20), m.synced.Height, "synced %d with %d txs", m.synced.Height, len(w.Txs()))
	require.Len(t, w.Txs(), 20, "synced %d with %d txs", m.synced.Height, len(w.Txs()))
	fi := m.st.Filter
	require.True(t, fi.Capped, "filter %+v: want capped at %d bytes with a rate above the target", fi, bip37.MaxFilterSize)
	require.Equal(t, bip37.MaxFilterSize, fi.Bytes, "filter %+v: want capped at %d bytes with a rate above the target", fi, bip37.MaxFilterSize)
	require.Greater(t, fi.FPRate, fi.TargetFPRate, "filter %+v: want capped at %d bytes with a rate above the target", fi, bip37.MaxFilterSize)
	loads := s.filterLoads()
	require.Equal(t, 1, loads, "%d filterloads for 20 blocks: a capped filter is reloaded for a target it cannot reach", loads)
	ev := waitEvent(t, sub, "FilterLoaded", func(e Event) bool {
		_, ok := e.(FilterLoaded)
		return ok
	}).(FilterLoaded)
	require.True(t, ev.Capped, "FilterLoaded %+v does not say the filter is capped", ev)
	require.Equal(t, filterpolicy.DefaultFPRate, ev.TargetFPRate, "FilterLoaded %+v does not say the filter is capped", ev)
}

func TestDriftFromAMatchNeverReceivedIsNotBanned(t *testing.T) {
	// The download peer's server matches T in block 2 (an OP_RETURN
	// pushing the wallet's hash: a false positive whose outpoint
	// BLOOM_UPDATE_ALL inserts), but does not send T, and answers the
	// node's MSG_TX with notfound. The node takes block 2 from the other
	// peer. Block 3 holds S spending T's output: the first server matches
	// it (it holds T:0), its mirror does not. That is drift: S is dropped,
	// never scored, and the watcher ends with the truth.
	w := watchtest.NewMemWatcher(1, p2wpkh(1))
	n, m := newTestManager(t, w, Config{})
	opReturn := append([]byte{0x6a, 0x14}, p2wpkh(1)[2:]...)
	tx := wire.NewMsgTx(2)
	tx.AddTxIn(wire.NewTxIn(&wire.OutPoint{Hash: chainhash.Hash{0x77}}, []byte{0x51}, nil))
	tx.AddTxOut(wire.NewTxOut(1, opReturn))
	spend := wire.NewMsgTx(2)
	spend.AddTxIn(wire.NewTxIn(&wire.OutPoint{Hash: tx.TxHash()}, nil, nil))
	spend.AddTxOut(wire.NewTxOut(1, p2wpkh(0x55)))
	chain := mineBlocks(t, n.cfg.Network, genesis(n), 4, func(i int) []*wire.MsgTx {
		switch i {
		case 1:
			return []*wire.MsgTx{tx}
		case 2:
			return []*wire.MsgTx{spend}
		}
		return []*wire.MsgTx{payTo(byte(i), 10, p2wpkh(1))}
	})
	first := addSimPeer(t, m, "first:1", chain, 0)
	first.tamper = func(mb *wire.MsgMerkleBlock, txs []*wire.MsgTx) (*wire.MsgMerkleBlock, []*wire.MsgTx) {
		var out []*wire.MsgTx
		for _, x := range txs {
			if x.TxHash() != tx.TxHash() {
				out = append(out, x)
			}
		}
		return mb, out // T stays matched in the proof but is not sent
	}
	second := addSimPeer(t, m, "second:1", chain, 1)
	for range 4 {
		first.run()
		second.run()
	}
	sc := n.bans.Score("first:1")
	require.Less(t, sc, uint32(banThreshold/5), "the honest first peer was scored %d for a tx its filter rightly matched", sc)
	require.Equal(t, int32(4), m.synced.Height, "synced %d with %d wallet txs, want 4 and 2", m.synced.Height, len(w.Txs()))
	require.Len(t, w.Txs(), 2, "synced %d with %d wallet txs, want 4 and 2", m.synced.Height, len(w.Txs()))
	require.NotEqual(t, 0, m.st.DriftDropped, "S was not seen as drift: the scenario did not happen: %+v loads first %d second %d", m.st, first.filterLoads(), second.filterLoads())
}

func TestUnfilteredRelaysAreDroppedThenIgnored(t *testing.T) {
	// A peer announcing transactions its filter does not match (bcoin's
	// whole-mempool answer to BIP35, or a flood) is never scored for it;
	// after maxUnmatchedRelays of them the node stops fetching its
	// announcements until its next filterload.
	w := watchtest.NewMemWatcher(1, p2wpkh(1))
	n, m := newTestManager(t, w, Config{})
	chain := mineBlocks(t, n.cfg.Network, genesis(n), 2, func(int) []*wire.MsgTx { return nil })
	s := addSimPeer(t, m, "sim:1", chain, 0)
	s.run()
	s.mempool = map[chainhash.Hash]*wire.MsgTx{}
	inv := wire.NewMsgInv()
	for i := range maxUnmatchedRelays + 50 {
		tx := payTo(byte(i), int64(1000+i), p2wpkh(0x99))
		tx.TxIn[0].PreviousOutPoint.Index = uint32(i)
		id := tx.TxHash()
		s.mempool[id] = tx
		_ = inv.AddInvVect(wire.NewInvVect(wire.InvTypeTx, &id))
		if len(inv.InvList) == 25 {
			s.deliver(inv)
			s.run()
			inv = wire.NewMsgInv()
		}
	}
	sc := n.bans.Score("sim:1")
	require.Equal(t, uint32(0), sc, "scored %d for unfiltered relays", sc)
	asked := 0
	for _, msg := range s.sent {
		if gd, ok := msg.(*wire.MsgGetData); ok {
			for _, iv := range gd.InvList {
				if iv.Type == wire.InvTypeTx {
					asked++
				}
			}
		}
	}
	require.LessOrEqual(t, asked, maxUnmatchedRelays+25, "asked %d relays, dropped %d: want at most %d asked after %d unmatched", asked, m.st.Dropped, maxUnmatchedRelays+25, maxUnmatchedRelays)
	require.GreaterOrEqual(t, m.st.Dropped, maxUnmatchedRelays, "asked %d relays, dropped %d: want at most %d asked after %d unmatched", asked, m.st.Dropped, maxUnmatchedRelays+25, maxUnmatchedRelays)
}

func TestCheckUsesTheFilterTheBlockWasServedWith(t *testing.T) {
	// a check compares the second peer's answer with the
	// primary's filter as it was when the primary served the block, not
	// as it is when the answer arrives. Here the primary served a block
	// whose tx pays a script its filter did not hold; the node then
	// learns that script (a new key) and reloads. The second peer's
	// answer holds the tx: the primary did not omit it and must stay.
	newKey := p2wpkh(2)
	w := watchtest.NewMemWatcher(1, p2wpkh(1))
	n, m := newTestManager(t, w, Config{})
	chain := mineBlocks(t, n.cfg.Network, genesis(n), 2, func(i int) []*wire.MsgTx {
		return []*wire.MsgTx{payTo(byte(i), 5, p2wpkh(1)), payTo(byte(100+i), 7, newKey)}
	})
	primary := addSimPeer(t, m, "primary:1", chain, 0)
	other := addSimPeer(t, m, "other:1", chain, 1)
	for range 5 {
		primary.run()
		other.run()
	}
	require.Equal(t, int32(2), m.synced.Height, "sync did not finish: synced %d", m.synced.Height)
	require.NotNil(t, primary.ps.mirror, "sync did not finish: synced %d", m.synced.Height)
	b := chain[1]
	paysNewKey := b.Transactions[2]
	require.False(t, primary.ps.mirror.MatchTx(paysNewKey), "the primary's filter already matches the new key's payment: the test tests nothing")
	plan := &checkPlan{height: 2, hash: b.BlockHash(), primary: primary.ps, snap: primary.ps.mirror.Clone(),
		total: uint32(len(b.Transactions)), cross: true,
		sent: []*wire.MsgTx{b.Transactions[1]}, indexes: []uint32{1}}
	// A new key: the primary's mirror (and its real filter) holds it now.
	w.AddScript(newKey)
	primary.ps.mirror.Add(newKey[2:])
	m.finishCheck(plan, nil, nil, []*wire.MsgTx{b.Transactions[1], paysNewKey}, []uint32{1, 2})
	_, banned := n.bans.IsBanned("primary:1")
	require.False(t, banned, "the primary was blamed for a tx its filter did not match when it served the block: omissions %d, bans %+v", m.st.Omissions, n.bans.Bans())
	require.Equal(t, 0, m.st.Omissions, "the primary was blamed for a tx its filter did not match when it served the block: omissions %d, bans %+v", m.st.Omissions, n.bans.Bans())
	// The same answer against a snapshot that held the key is an omission.
	plan = &checkPlan{height: 2, hash: b.BlockHash(), primary: primary.ps, snap: primary.ps.mirror.Clone(),
		total: uint32(len(b.Transactions)), cross: true,
		sent: []*wire.MsgTx{b.Transactions[1]}, indexes: []uint32{1}}
	m.finishCheck(plan, nil, nil, []*wire.MsgTx{b.Transactions[1], paysNewKey}, []uint32{1, 2})
	require.Equal(t, 1, m.st.Omissions, "omissions %d, want 1 when the served filter matched the tx", m.st.Omissions)
}

func TestBlocksWithoutSecondPeerAreUnchecked(t *testing.T) {
	// With one peer the check every block asks for cannot run: each block
	// says so in its BlockProcessed event and in Stats.Unchecked. With a
	// second peer every block is checked and none is unchecked.
	for _, peers := range []int{1, 2} {
		w := watchtest.NewMemWatcher(1, p2wpkh(1))
		n, m := newTestManager(t, w, Config{SpotCheckEvery: 1})
		sub := n.Subscribe()
		chain := mineBlocks(t, n.cfg.Network, genesis(n), 5, func(i int) []*wire.MsgTx {
			return []*wire.MsgTx{payTo(byte(i), 5, p2wpkh(1))}
		})
		var sims []*simServer
		for i := range peers {
			sims = append(sims, addSimPeer(t, m, fmt.Sprintf("sim:%d", i+1), chain, i))
		}
		for range 5 {
			for _, s := range sims {
				s.run()
			}
		}
		require.Equal(t, int32(5), m.synced.Height, "%d peers: synced %d of 5", peers, m.synced.Height)
		want, wantUnchecked := CheckSecondPeer, 0
		if peers == 1 {
			want, wantUnchecked = CheckNoSecondPeer, 5
		}
		require.Equal(t, wantUnchecked, m.st.Unchecked, "%d peers: Unchecked %d, want %d", peers, m.st.Unchecked, wantUnchecked)
		got := 0
		timeout := time.After(5 * time.Second)
		for got < 5 {
			select {
			case e := <-sub.Events():
				if bp, ok := e.(BlockProcessed); ok {
					got++
					require.Equal(t, want, bp.Checks, "%d peers: block %d checks %v, want %v", peers, bp.Height, bp.Checks, want)
				}
			case <-timeout:
				require.FailNow(t, fmt.Sprintf("%d peers: %d of 5 BlockProcessed events", peers, got))
			}
		}
		sub.Cancel()
	}
}

func TestCheckWaitsForSecondPeerToHaveTheBlock(t *testing.T) {
	// A new block the download peer serves before the second peer has it
	// (the download peer announced it first): the check waits, and is
	// sent when the second peer announces the block. If it never does,
	// the block is unchecked after Config.CheckWait. While it waits the
	// node is at the tip and not synced.
	for _, announce := range []bool{true, false} {
		w := watchtest.NewMemWatcher(1, p2wpkh(1))
		clk := &fakeClock{now: time.Unix(1_700_000_000, 0)}
		n, m := newTestManager(t, w, Config{SpotCheckEvery: 1, clock: clk})
		chain := mineBlocks(t, n.cfg.Network, genesis(n), 5, func(i int) []*wire.MsgTx {
			return []*wire.MsgTx{payTo(byte(i), 5, p2wpkh(1))}
		})
		dl := addSimPeer(t, m, "a:1", chain, 0)
		other := addSimPeer(t, m, "b:1", chain[:4], 1) // lacks block 5
		for range 5 {
			dl.run()
			other.run()
		}
		require.Equal(t, int32(5), m.synced.Height, "synced %d of 5", m.synced.Height)
		require.Len(t, m.waiting, 1, "announce %v: waiting %d, spot checks %d, unchecked %d; want block 5 waiting after 4 checks", announce, len(m.waiting), m.st.SpotChecks, m.st.Unchecked)
		require.Equal(t, int32(5), m.waiting[0].height, "announce %v: waiting %d, spot checks %d, unchecked %d; want block 5 waiting after 4 checks", announce, len(m.waiting), m.st.SpotChecks, m.st.Unchecked)
		require.Equal(t, 4, m.st.SpotChecks, "announce %v: waiting %d, spot checks %d, unchecked %d; want block 5 waiting after 4 checks", announce, len(m.waiting), m.st.SpotChecks, m.st.Unchecked)
		require.Equal(t, 0, m.st.Unchecked, "announce %v: waiting %d, spot checks %d, unchecked %d; want block 5 waiting after 4 checks", announce, len(m.waiting), m.st.SpotChecks, m.st.Unchecked)
		require.False(t, m.st.Synced, "synced %v, at tip %v, awaiting %d, checks in flight %d: a waiting check holds synced back and is counted", m.st.Synced, m.st.AtTip, m.st.AwaitingCheck, m.checksInFlight())
		require.True(t, m.st.AtTip, "synced %v, at tip %v, awaiting %d, checks in flight %d: a waiting check holds synced back and is counted", m.st.Synced, m.st.AtTip, m.st.AwaitingCheck, m.checksInFlight())
		require.Equal(t, 1, m.st.AwaitingCheck, "synced %v, at tip %v, awaiting %d, checks in flight %d: a waiting check holds synced back and is counted", m.st.Synced, m.st.AtTip, m.st.AwaitingCheck, m.checksInFlight())
		require.Equal(t, 1, m.checksInFlight(), "synced %v, at tip %v, awaiting %d, checks in flight %d: a waiting check holds synced back and is counted", m.st.Synced, m.st.AtTip, m.st.AwaitingCheck, m.checksInFlight())
		if announce {
			other.setChain(chain)
			inv := wire.NewMsgInv()
			h := chain[4].BlockHash()
			_ = inv.AddInvVect(wire.NewInvVect(wire.InvTypeBlock, &h))
			other.deliver(inv)
			for range 3 {
				other.run()
				dl.run()
			}
			require.Empty(t, m.waiting, "after the announcement: waiting %d, spot checks %d, unchecked %d, omissions %d, synced %v", len(m.waiting), m.st.SpotChecks, m.st.Unchecked, m.st.Omissions, m.st.Synced)
			require.Equal(t, 5, m.st.SpotChecks, "after the announcement: waiting %d, spot checks %d, unchecked %d, omissions %d, synced %v", len(m.waiting), m.st.SpotChecks, m.st.Unchecked, m.st.Omissions, m.st.Synced)
			require.Equal(t, 0, m.st.Unchecked, "after the announcement: waiting %d, spot checks %d, unchecked %d, omissions %d, synced %v", len(m.waiting), m.st.SpotChecks, m.st.Unchecked, m.st.Omissions, m.st.Synced)
			require.Equal(t, 0, m.st.Omissions, "after the announcement: waiting %d, spot checks %d, unchecked %d, omissions %d, synced %v", len(m.waiting), m.st.SpotChecks, m.st.Unchecked, m.st.Omissions, m.st.Synced)
			require.True(t, m.st.Synced, "after the announcement: waiting %d, spot checks %d, unchecked %d, omissions %d, synced %v", len(m.waiting), m.st.SpotChecks, m.st.Unchecked, m.st.Omissions, m.st.Synced)
			continue
		}
		clk.now = clk.now.Add(n.cfg.Tuning.CheckWait + time.Second)
		m.handle(tickMsg{now: clk.now})
		require.Empty(t, m.waiting, "after CheckWait: waiting %d, unchecked %d, spot checks %d, synced %v, awaiting %d", len(m.waiting), m.st.Unchecked, m.st.SpotChecks, m.st.Synced, m.st.AwaitingCheck)
		require.Equal(t, 1, m.st.Unchecked, "after CheckWait: waiting %d, unchecked %d, spot checks %d, synced %v, awaiting %d", len(m.waiting), m.st.Unchecked, m.st.SpotChecks, m.st.Synced, m.st.AwaitingCheck)
		require.Equal(t, 4, m.st.SpotChecks, "after CheckWait: waiting %d, unchecked %d, spot checks %d, synced %v, awaiting %d", len(m.waiting), m.st.Unchecked, m.st.SpotChecks, m.st.Synced, m.st.AwaitingCheck)
		require.True(t, m.st.Synced, "after CheckWait: waiting %d, unchecked %d, spot checks %d, synced %v, awaiting %d", len(m.waiting), m.st.Unchecked, m.st.SpotChecks, m.st.Synced, m.st.AwaitingCheck)
		require.Equal(t, 0, m.st.AwaitingCheck, "after CheckWait: waiting %d, unchecked %d, spot checks %d, synced %v, awaiting %d", len(m.waiting), m.st.Unchecked, m.st.SpotChecks, m.st.Synced, m.st.AwaitingCheck)
	}
}

func TestCheckAskedAgainWhenSecondPeerLeaves(t *testing.T) {
	// The second peers go away before answering a check: the check goes
	// to a peer that remains instead of being lost. One of two leaving is
	// no loss: the other answers.
	w := watchtest.NewMemWatcher(1, p2wpkh(1))
	n, m := newTestManager(t, w, Config{SpotCheckEvery: 1})
	chain := mineBlocks(t, n.cfg.Network, genesis(n), 3, func(i int) []*wire.MsgTx {
		return []*wire.MsgTx{payTo(byte(i), 5, p2wpkh(1))}
	})
	dl := addSimPeer(t, m, "a:1", chain, 0)
	second := addSimPeer(t, m, "b:1", chain, 1)
	third := addSimPeer(t, m, "c:1", chain, 2)
	dl.run() // both others get the checks and never answer them
	require.Equal(t, int32(3), m.synced.Height, "synced %d, spot checks %d", m.synced.Height, m.st.SpotChecks)
	require.Equal(t, 3, m.st.SpotChecks, "synced %d, spot checks %d", m.synced.Height, m.st.SpotChecks)
	require.NotEqual(t, 0, second.count(wire.CmdGetData), "synced %d, spot checks %d", m.synced.Height, m.st.SpotChecks)
	require.NotEqual(t, 0, third.count(wire.CmdGetData), "synced %d, spot checks %d", m.synced.Height, m.st.SpotChecks)
	second.queue, third.queue = nil, nil
	fourth := addSimPeer(t, m, "d:1", chain, 3)
	fourth.run()
	m.handle(peerDoneMsg{ps: second.ps})
	m.handle(peerDoneMsg{ps: third.ps})
	for range 3 {
		fourth.run()
		dl.run()
	}
	require.Equal(t, 6, m.st.SpotChecks, "spot checks %d (want 3 + 3 again), in flight %d, unchecked %d", m.st.SpotChecks, m.checksInFlight(), m.st.Unchecked)
	require.Equal(t, 0, m.checksInFlight(), "spot checks %d (want 3 + 3 again), in flight %d, unchecked %d", m.st.SpotChecks, m.checksInFlight(), m.st.Unchecked)
	require.Equal(t, 0, m.st.Unchecked, "spot checks %d (want 3 + 3 again), in flight %d, unchecked %d", m.st.SpotChecks, m.checksInFlight(), m.st.Unchecked)
	// One of two second peers leaving: the other's answer checks it.
	w2 := watchtest.NewMemWatcher(1, p2wpkh(1))
	n2, m2 := newTestManager(t, w2, Config{SpotCheckEvery: 1})
	dl2 := addSimPeer(t, m2, "a:1", chain, 0)
	gone := addSimPeer(t, m2, "b:1", chain, 1)
	stays := addSimPeer(t, m2, "c:1", chain, 2)
	dl2.run()
	gone.queue = nil
	m2.handle(peerDoneMsg{ps: gone.ps})
	for range 3 {
		stays.run()
		dl2.run()
	}
	require.Equal(t, 3, m2.st.SpotChecks, "one of two gone: spot checks %d, in flight %d, unchecked %d", m2.st.SpotChecks, m2.checksInFlight(), m2.st.Unchecked)
	require.Equal(t, 0, m2.checksInFlight(), "one of two gone: spot checks %d, in flight %d, unchecked %d", m2.st.SpotChecks, m2.checksInFlight(), m2.st.Unchecked)
	require.Equal(t, 0, m2.st.Unchecked, "one of two gone: spot checks %d, in flight %d, unchecked %d", m2.st.SpotChecks, m2.checksInFlight(), m2.st.Unchecked)
	require.Equal(t, 0, n2.Status().Omissions, "one of two gone: spot checks %d, in flight %d, unchecked %d", m2.st.SpotChecks, m2.checksInFlight(), m2.st.Unchecked)
}

func TestCheckWaitsForALaggingSecondPeer(t *testing.T) {
	// The second peer is lagging (it claimed more than our tip and gave
	// no headers: mid-reorg, as the demo's follower btcd is after a
	// reorg) while the download peer serves new blocks: their checks
	// wait for it instead of being unchecked at once, and are sent when
	// it catches up.
	w := watchtest.NewMemWatcher(1, p2wpkh(1))
	clk := &fakeClock{now: time.Unix(1_700_000_000, 0)}
	n, m := newTestManager(t, w, Config{SpotCheckEvery: 1, clock: clk})
	chain := mineBlocks(t, n.cfg.Network, genesis(n), 5, func(i int) []*wire.MsgTx {
		return []*wire.MsgTx{payTo(byte(i), 5, p2wpkh(1))}
	})
	dl := addSimPeer(t, m, "a:1", chain, 0)
	other := addSimPeer(t, m, "b:1", chain[:2], 1)
	other.ps.lagSince, other.ps.lagRetry = clk.now, clk.now.Add(time.Hour)
	for range 5 {
		dl.run()
	}
	require.Equal(t, int32(5), m.synced.Height, "synced %d of 5", m.synced.Height)
	require.Equal(t, 0, m.st.Unchecked, "unchecked %d, waiting %d; want 0 and 5 checks waiting for the lagging peer", m.st.Unchecked, len(m.waiting))
	require.Len(t, m.waiting, 5, "unchecked %d, waiting %d; want 0 and 5 checks waiting for the lagging peer", m.st.Unchecked, len(m.waiting))
	// It catches up: its headers clear the lag and the checks go out.
	other.setChain(chain)
	hs := wire.NewMsgHeaders()
	for _, b := range chain {
		_ = hs.AddBlockHeader(&b.Header)
	}
	other.deliver(hs)
	for range 3 {
		other.run()
		dl.run()
	}
	require.Empty(t, m.waiting, "after it caught up: waiting %d, spot checks %d, unchecked %d, omissions %d", len(m.waiting), m.st.SpotChecks, m.st.Unchecked, m.st.Omissions)
	require.Equal(t, 5, m.st.SpotChecks, "after it caught up: waiting %d, spot checks %d, unchecked %d, omissions %d", len(m.waiting), m.st.SpotChecks, m.st.Unchecked, m.st.Omissions)
	require.Equal(t, 0, m.st.Unchecked, "after it caught up: waiting %d, spot checks %d, unchecked %d, omissions %d", len(m.waiting), m.st.SpotChecks, m.st.Unchecked, m.st.Omissions)
	require.Equal(t, 0, m.st.Omissions, "after it caught up: waiting %d, spot checks %d, unchecked %d, omissions %d", len(m.waiting), m.st.SpotChecks, m.st.Unchecked, m.st.Omissions)
}
