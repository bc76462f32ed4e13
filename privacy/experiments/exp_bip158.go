package experiments

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/bloomwatch/bloomwatch/bip37"
	"github.com/bloomwatch/bloomwatch/filterpolicy"
	"github.com/bloomwatch/bloomwatch/privacy"
	"github.com/bloomwatch/bloomwatch/privacy/internal/synth"
	"github.com/btcsuite/btcd/btcutil/gcs/builder"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
)

// The bip158 experiment: BIP37 beside BIP157/158 on one synthetic chain
// of mainnet-like density (bip158TxsPerBlock transactions a block, one
// or two inputs with a signature and a key pushed, two fresh P2PKH
// outputs), for wallets of several sizes, at the rates clients run. A
// BIP158 client downloads every block's basic filter (built by
// btcutil/gcs/builder: P = 19, M = 784,931) and its header, tests its
// scripts, and fetches the blocks that match; the server that serves the
// blocks learns which were fetched, and its candidate scripts are those
// whose every appearance lies in fetched blocks. A BIP37 client sends a
// filter sized by filterpolicy for its scripts' hash160s at each rate;
// the peer's candidates are the chain's scripts that filter matches. Its
// bytes are replayed block by block (a merkleblock and the matched
// transactions) under each update flag: BLOOM_UPDATE_NONE, and
// BLOOM_UPDATE_ALL with the client's reload at DefaultReloadFPRatio
// times the rate (each reload a new filterload, as bloomwatch and
// bitcoinj do). Every figure is a measured operating point; nothing is
// interpolated between rates.
const (
	bip158TxsPerBlock    = 2500
	bip158Blocks         = 144 // a day
	bip158WalletsPerSize = 4
	bip158Stream         = 9000
	// bip158TwoInputs is the share of background transactions with two
	// inputs.
	bip158TwoInputs = 0.3
	// bip158SpendShare is the share of a wallet's received outputs it
	// spends later in the chain (with change to its next key).
	bip158SpendShare = 0.5
	// filterLoadFixed is a filterload's size beyond its filter: the
	// length prefix, nHashFuncs, nTweak and nFlags.
	filterLoadFixed = 1 + 4 + 4 + 1
	// bip157HeaderBytes is a filter header, fetched with every filter.
	bip157HeaderBytes = chainhash.HashSize
	sigPushBytes      = 72
	pubKeyBytes       = 33
	synthValue        = 10_000
)

// bip158Sizes are the wallet sizes: scripts watched (used and lookahead).
var bip158Sizes = []int{20, 200, 2000}

// bip37Op is a BIP37 operating point: a rate and the client's sizing.
type bip37Op struct {
	rate float64
	who  string
	// bitcoinj sizes as bitcoinj does: both the pubkey and its hash
	// inserted, BIP37's formula at a capacity of the elements plus 100;
	// otherwise filterpolicy's sizing of the scripts' hash160s.
	bitcoinj bool
}

// bip37Operating are the BIP37 settings clients run (docs/RESEARCH.md,
// Sources): bitcoinj's defaults, bloomwatch's, and bloomwatch's rate as a
// privacy-minded user raises it.
var bip37Operating = []bip37Op{
	{1e-5, "bitcoinj 0.13+", true},
	{5e-4, "bitcoinj 0.12", true},
	{filterpolicy.DefaultFPRate, "bloomwatch default", false},
	{1e-2, "bloomwatch raised", false},
	{0.1, "bloomwatch raised", false},
}

// bitcoinjSlack is the capacity bitcoinj adds beyond a filter's elements.
const bitcoinjSlack = 100

// denseUTXO is an unspent output of the dense chain.
type denseUTXO struct {
	op     wire.OutPoint
	script []byte
	pub    []byte // the key a spend pushes (nil: a random one)
}

// denseWallet is one wallet of the dense chain.
type denseWallet struct {
	size    int
	keys    []Key
	scripts [][]byte
	own     map[string]bool
	// ownTx marks the wallet's transactions by height and index.
	ownTx map[[2]int32]bool
	// ownBlocks marks the heights holding one.
	ownBlocks map[int32]bool
	next      int
	utxos     []denseUTXO
}

// denseChain is the chain, every block's spent scripts, and where each
// script appears.
type denseChain struct {
	blocks  []*wire.MsgBlock
	prev    [][][]byte
	appears map[string][]int32
	wallets []*denseWallet
}

// denseEvent is a wallet's transaction scheduled at a height.
type denseEvent struct {
	w     *denseWallet
	spend bool
}

// newDenseChain builds the chain with the wallets' payments woven in.
func newDenseChain(seed uint64, blocks, perSize int) *denseChain {
	rng := rand.New(rand.NewPCG(seed, bip158Stream))
	dc := &denseChain{appears: map[string][]int32{}}
	events := make([][]denseEvent, blocks)
	for si, n := range bip158Sizes {
		for wi := range perSize {
			w := &denseWallet{size: n, own: map[string]bool{}, ownTx: map[[2]int32]bool{}, ownBlocks: map[int32]bool{}}
			for i := range n {
				k := synthKey(seed, bip158Stream<<32|uint64(si*perSize+wi+1), uint64(i))
				w.keys = append(w.keys, k)
				s := synth.P2PKH(k.Hash160)
				w.scripts = append(w.scripts, s)
				w.own[string(s)] = true
			}
			used := n/10 + 2
			for range used {
				h := 1 + rng.IntN(blocks-1)
				events[h] = append(events[h], denseEvent{w: w})
				if rng.Float64() < bip158SpendShare && h+1 < blocks {
					s := h + 1 + rng.IntN(blocks-h-1)
					events[s] = append(events[s], denseEvent{w: w, spend: true})
				}
			}
			dc.wallets = append(dc.wallets, w)
		}
	}
	fresh := func() []byte {
		var h [hash160Size]byte
		for i := range h {
			h[i] = byte(rng.Uint32())
		}
		return synth.P2PKH(h[:])
	}
	randomPush := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		return b
	}
	var pool []denseUTXO
	take := func() denseUTXO {
		i := rng.IntN(len(pool))
		u := pool[i]
		pool[i] = pool[len(pool)-1]
		pool = pool[:len(pool)-1]
		return u
	}
	var prevHash chainhash.Hash
	for h := range blocks {
		blk := &wire.MsgBlock{Header: wire.BlockHeader{Version: 1, PrevBlock: prevHash, Bits: 0x207fffff, Nonce: uint32(h)}}
		seen := map[string]bool{}
		note := func(s []byte) {
			if !seen[string(s)] {
				seen[string(s)] = true
				dc.appears[string(s)] = append(dc.appears[string(s)], int32(h))
			}
		}
		var prev [][]byte
		add := func(tx *wire.MsgTx, spent []denseUTXO) {
			for _, u := range spent {
				pub := u.pub
				if pub == nil {
					pub = randomPush(pubKeyBytes)
				}
				sig, _ := synthSigScript(randomPush(sigPushBytes), pub)
				tx.AddTxIn(&wire.TxIn{PreviousOutPoint: u.op, SignatureScript: sig, Sequence: wire.MaxTxInSequenceNum})
				prev = append(prev, u.script)
				note(u.script)
			}
			blk.Transactions = append(blk.Transactions, tx)
		}
		outs := func(tx *wire.MsgTx, scripts ...[]byte) []denseUTXO {
			var us []denseUTXO
			for _, s := range scripts {
				tx.AddTxOut(wire.NewTxOut(synthValue, s))
				note(s)
			}
			txid := tx.TxHash()
			for i, s := range scripts {
				us = append(us, denseUTXO{op: wire.OutPoint{Hash: txid, Index: uint32(i)}, script: s})
			}
			return us
		}
		// The coinbase funds the pool (the first one with a block's worth
		// of outputs).
		cb := wire.NewMsgTx(wire.TxVersion)
		cb.AddTxIn(&wire.TxIn{PreviousOutPoint: wire.OutPoint{Index: math.MaxUint32}, SignatureScript: []byte{byte(h), byte(h >> 8), byte(h >> 16)}, Sequence: wire.MaxTxInSequenceNum})
		n := 1
		if h == 0 {
			n = 3 * bip158TxsPerBlock
		}
		var cbScripts [][]byte
		for range n {
			cbScripts = append(cbScripts, fresh())
		}
		blk.Transactions = append(blk.Transactions, cb)
		pool = append(pool, outs(cb, cbScripts...)...)
		if h > 0 {
			// Wallet transactions at random places among the background.
			at := map[int][]denseEvent{}
			for _, e := range events[h] {
				i := rng.IntN(bip158TxsPerBlock)
				at[i] = append(at[i], e)
			}
			for i := range bip158TxsPerBlock {
				for _, e := range at[i] {
					w := e.w
					tx := wire.NewMsgTx(wire.TxVersion)
					var spent []denseUTXO
					var to [][]byte
					if e.spend && len(w.utxos) > 0 {
						spent = []denseUTXO{w.utxos[0]}
						w.utxos = w.utxos[1:]
						to = [][]byte{fresh(), w.scripts[min(w.next, w.size-1)]}
					} else {
						spent = []denseUTXO{take()}
						to = [][]byte{w.scripts[min(w.next, w.size-1)], fresh()}
					}
					keyIdx := min(w.next, w.size-1)
					w.next++
					add(tx, spent)
					us := outs(tx, to...)
					w.ownTx[[2]int32{int32(h), int32(len(blk.Transactions) - 1)}] = true
					w.ownBlocks[int32(h)] = true
					for _, u := range us {
						if w.own[string(u.script)] {
							u.pub = w.keys[keyIdx].PubKey
							w.utxos = append(w.utxos, u)
						} else {
							pool = append(pool, u)
						}
					}
				}
				tx := wire.NewMsgTx(wire.TxVersion)
				spent := []denseUTXO{take()}
				if rng.Float64() < bip158TwoInputs && len(pool) > 1 {
					spent = append(spent, take())
				}
				add(tx, spent)
				pool = append(pool, outs(tx, fresh(), fresh())...)
			}
		}
		blk.Header.MerkleRoot = blk.Transactions[0].TxHash()
		prevHash = blk.BlockHash()
		dc.blocks = append(dc.blocks, blk)
		dc.prev = append(dc.prev, prev)
	}
	return dc
}

// synthSigScript is a P2PKH scriptSig of a placeholder signature and a
// key.
func synthSigScript(sig, pub []byte) ([]byte, error) {
	out := make([]byte, 0, len(sig)+len(pub)+2)
	out = append(out, byte(len(sig)))
	out = append(out, sig...)
	out = append(out, byte(len(pub)))
	return append(out, pub...), nil
}

// bip158Point is one wallet's outcome under one protocol setting.
type bip158Point struct {
	bytes, own, cands, fpTx, reloads, fpBlocks, fetched float64
}

// bip158Outcome is one wallet's outcomes.
type bip158Outcome struct {
	size      int
	gcs       bip158Point
	none, all []bip158Point // per operating rate
}

// runBIP158 measures both protocols for every wallet.
func runBIP158(ctx context.Context, cfg Config) (*Result, error) {
	blocks := orDefault(cfg.Blocks, bip158Blocks)
	perSize := orDefault(cfg.Wallets, bip158WalletsPerSize)
	if blocks < 2 {
		return nil, fmt.Errorf("%w: bip158 needs 2 blocks or more, got %d", ErrBadConfig, blocks)
	}
	dc := newDenseChain(cfg.Seed, blocks, perSize)
	type gcsBlock struct {
		match func([][]byte) (bool, error)
		bytes int
	}
	filters := make([]gcsBlock, len(dc.blocks))
	blockBytes := make([]float64, len(dc.blocks))
	for h, b := range dc.blocks {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		f, err := builder.BuildBasicFilter(b, dc.prev[h])
		if err != nil {
			return nil, fmt.Errorf("bip158: block %d filter: %w", h, err)
		}
		nb, err := f.NBytes()
		if err != nil {
			return nil, fmt.Errorf("bip158: block %d filter: %w", h, err)
		}
		hash := b.BlockHash()
		key := builder.DeriveKey(&hash)
		filters[h] = gcsBlock{bytes: len(nb), match: func(q [][]byte) (bool, error) { return f.MatchAny(key, q) }}
		blockBytes[h] = float64(b.SerializeSize())
		cfg.progress("filters", h+1, len(dc.blocks))
	}
	rng := rand.New(rand.NewPCG(cfg.Seed, bip158Stream+1))
	var outs []bip158Outcome
	for wi, w := range dc.wallets {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		o := bip158Outcome{size: w.size}
		fetched := map[int32]bool{}
		for h := range dc.blocks {
			o.gcs.bytes += float64(filters[h].bytes + bip157HeaderBytes)
			ok, err := filters[h].match(w.scripts)
			if err != nil {
				return nil, fmt.Errorf("bip158: match: %w", err)
			}
			if ok {
				fetched[int32(h)] = true
				o.gcs.fetched++
				o.gcs.bytes += blockBytes[h]
				if !w.ownBlocks[int32(h)] {
					o.gcs.fpBlocks++
				}
			}
		}
		for s, hs := range dc.appears {
			all := true
			for _, h := range hs {
				if !fetched[h] {
					all = false
					break
				}
			}
			if all {
				o.gcs.cands++
				if w.own[s] {
					o.gcs.own++
				}
			}
		}
		tweak := rng.Uint32()
		for _, op := range bip37Operating {
			var pts [2]bip158Point
			for fi, flag := range []bip37.UpdateFlag{bip37.UpdateNone, bip37.UpdateAll} {
				f, err := walletFilter(w, op, tweak, flag)
				if err != nil {
					return nil, err
				}
				pt := &pts[fi]
				if fi == 0 {
					// The peer's candidates: the chain's scripts the
					// loaded filter matches (the same filter under
					// either flag; the peer keeps it).
					for s := range dc.appears {
						if push := p2pkhHash([]byte(s)); push != nil && f.Matches(push) {
							pt.cands++
							if w.own[s] {
								pt.own++
							}
						}
					}
				}
				pt.bytes = float64(f.Size() + filterLoadFixed)
				srv := f.Clone()
				for h, b := range dc.blocks {
					mb, idx := bip37.FilterBlock(srv, b)
					pt.bytes += float64(merkleBlockFixed + len(mb.Hashes)*chainhash.HashSize + len(mb.Flags))
					for _, i := range idx {
						pt.bytes += float64(b.Transactions[i].SerializeSize())
						if !w.ownTx[[2]int32{int32(h), int32(i)}] {
							pt.fpTx++
						}
					}
					if flag == bip37.UpdateAll && srv.CurrentFPRate() > filterpolicy.DefaultReloadFPRatio*op.rate {
						if srv, err = walletFilter(w, op, tweak, flag); err != nil {
							return nil, err
						}
						pt.reloads++
						pt.bytes += float64(srv.Size() + filterLoadFixed)
					}
				}
			}
			pts[1].own, pts[1].cands = pts[0].own, pts[0].cands
			o.none, o.all = append(o.none, pts[0]), append(o.all, pts[1])
		}
		outs = append(outs, o)
		cfg.progress("wallets", wi+1, len(dc.wallets))
	}
	return bip158Result(dc, outs), nil
}

// walletFilter is the wallet's BIP37 filter at an operating point.
func walletFilter(w *denseWallet, op bip37Op, tweak uint32, flag bip37.UpdateFlag) (*bip37.Filter, error) {
	size, k := filterpolicy.FilterSize(len(w.keys), op.rate)
	if op.bitcoinj {
		b, kb := bip37.Params(uint32(2*len(w.keys)+bitcoinjSlack), op.rate)
		size, k = int(b), kb
	}
	f, err := bip37.NewFilterFromBits(make([]byte, size), k, tweak, flag)
	if err != nil {
		return nil, fmt.Errorf("bip158: filter: %w", err)
	}
	for _, key := range w.keys {
		f.Add(key.Hash160)
		if op.bitcoinj {
			f.Add(key.PubKey)
		}
	}
	return f, nil
}

// bip158Assumptions name what each assumption favours, for the rows'
// notes and the figure.
var bip158Assumptions = []string{
	"favours BIP37: one server sees every fetched block",
	"favours BIP37: its precision from the loaded filter, reloads not intersected",
	"favours BIP37: the peer tests hash160s alone, not bitcoinj's pubkey AND hash",
	"favours BIP158: its candidates are the scripts only in fetched blocks, no graph analysis",
	"favours BIP158: a fresh script for every background output, no reuse",
}

// bip158Result writes the rows and the chart.
func bip158Result(dc *denseChain, outs []bip158Outcome) *Result {
	txs := 0
	for _, b := range dc.blocks {
		txs += len(b.Transactions)
	}
	out := &Result{
		Name:  "bip158",
		Title: "BIP37 beside BIP157/158 on a chain of mainnet-like density: bytes and what the serving peer learns, per wallet size, at the rates clients run",
		Params: []Param{
			param("blocks", len(dc.blocks)), param("txs_per_block", bip158TxsPerBlock), param("txs", txs), param("wallet_sizes", fmt.Sprint(bip158Sizes)),
			param("wallets_per_size", len(outs)/len(bip158Sizes)), param("bip158_P", builder.DefaultP), param("bip158_M", builder.DefaultM),
		},
	}
	const unit = "wallets"
	for ci, size := range bip158Sizes {
		chart := privacy.Chart{
			Title: fmt.Sprintf("%d scripts: what the serving peer learns per kB (measured here)", size), XLabel: "kB downloaded per wallet", YLabel: "the peer's precision",
			LogX: true, LogY: true,
			Notes: []string{fmt.Sprintf("%d wallets of %d scripts; BIP37 at 1e-5 and 5e-4 (bitcoinj sizing), 1e-4 (bloomwatch), 0.01 and 0.1 (bloomwatch raised)", len(outs)/len(bip158Sizes), size)},
		}
		if ci == 0 {
			chart.Notes = append(chart.Notes, fmt.Sprintf("synthetic chain: %d blocks of %d transactions; 95 %% intervals over wallets", len(dc.blocks), bip158TxsPerBlock))
			chart.Notes = append(chart.Notes, bip158Assumptions...)
		}
		var ws []bip158Outcome
		for _, o := range outs {
			if o.size == size {
				ws = append(ws, o)
			}
		}
		col := func(get func(bip158Outcome) float64) []float64 {
			v := make([]float64, len(ws))
			for i, o := range ws {
				v[i] = get(o)
			}
			return v
		}
		ones := col(func(bip158Outcome) float64 { return 1 })
		kb := func(get func(bip158Outcome) float64) []float64 {
			return col(func(o bip158Outcome) float64 { return get(o) / 1000 })
		}
		pre := fmt.Sprintf("%d scripts: ", size)
		gcsKB := clusterMeanRow(pre+"BIP158: kB downloaded (every filter and header, the fetched blocks)", kb(func(o bip158Outcome) float64 { return o.gcs.bytes }), ones, false, unit)
		gcsP := clusterPropRow(pre+"BIP158: the block server's precision", col(func(o bip158Outcome) float64 { return o.gcs.own }), col(func(o bip158Outcome) float64 { return o.gcs.cands }), unit).
			withNote("candidates: scripts seen only in fetched blocks")
		out.Rows = append(out.Rows,
			clusterMeanRow(pre+"BIP158: blocks fetched", col(func(o bip158Outcome) float64 { return o.gcs.fetched }), ones, true, unit),
			clusterMeanRow(pre+"BIP158: false-positive blocks fetched", col(func(o bip158Outcome) float64 { return o.gcs.fpBlocks }), ones, true, unit),
			gcsKB, gcsP)
		chart.Series = append(chart.Series, privacy.Series{Name: "BIP158", X: []float64{gcsKB.Measured}, Y: []float64{gcsP.Measured},
			YLo: []float64{gcsP.Interval[0]}, YHi: []float64{gcsP.Interval[1]}, Points: true, Group: "158"})
		var nx, ny, nlo, nhi, ax, ay []float64
		for ri, op := range bip37Operating {
			rp := fmt.Sprintf("%sBIP37 at %g (%s): ", pre, op.rate, op.who)
			noneKB := clusterMeanRow(rp+"kB downloaded, BLOOM_UPDATE_NONE", kb(func(o bip158Outcome) float64 { return o.none[ri].bytes }), ones, false, unit)
			allKB := clusterMeanRow(rp+"kB downloaded, BLOOM_UPDATE_ALL (reload at 10x the rate)", kb(func(o bip158Outcome) float64 { return o.all[ri].bytes }), ones, false, unit)
			p := clusterPropRow(rp+"the peer's precision (the loaded filter, either flag)", col(func(o bip158Outcome) float64 { return o.none[ri].own }), col(func(o bip158Outcome) float64 { return o.none[ri].cands }), unit)
			out.Rows = append(out.Rows, noneKB,
				clusterMeanRow(rp+"false-positive transactions sent, BLOOM_UPDATE_NONE", col(func(o bip158Outcome) float64 { return o.none[ri].fpTx }), ones, true, unit),
				allKB,
				clusterMeanRow(rp+"false-positive transactions sent, BLOOM_UPDATE_ALL", col(func(o bip158Outcome) float64 { return o.all[ri].fpTx }), ones, true, unit),
				clusterMeanRow(rp+"reloads, BLOOM_UPDATE_ALL", col(func(o bip158Outcome) float64 { return o.all[ri].reloads }), ones, true, unit),
				p)
			nx, ny = append(nx, noneKB.Measured), append(ny, p.Measured)
			nlo, nhi = append(nlo, p.Interval[0]), append(nhi, p.Interval[1])
			ax, ay = append(ax, allKB.Measured), append(ay, p.Measured)
		}
		chart.Series = append(chart.Series,
			privacy.Series{Name: "BIP37 UPDATE_NONE", X: nx, Y: ny, YLo: nlo, YHi: nhi, Points: true, Group: "none"},
			privacy.Series{Name: "BIP37 UPDATE_ALL", X: ax, Y: ay, YLo: nlo, YHi: nhi, Points: true, Group: "all"})
		out.Charts = append(out.Charts, chart)
	}
	return out
}
