package testnet

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand"
	"os"
	"sort"

	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
)

// ChainSpec describes a reproducible scenario chain for BuildChain.
type ChainSpec struct {
	// Blocks is how many blocks to mine; TxsPerBlock how many noise
	// transactions (funder to random scripts) each holds.
	Blocks      int
	TxsPerBlock int
	// Keyring is the user's wallet; Purpose (44, 49 or 84; 0 = 84)
	// selects its address type.
	Keyring *Keyring
	Purpose uint32
	// WatchAddrs is how many receive addresses (indexes 0..WatchAddrs-1)
	// get payments, PaymentsPerAddr each (0 = 1). First payments come in
	// index order, so a wallet with any gap limit >= 1 finds them all.
	WatchAddrs      int
	PaymentsPerAddr int
	// SpendFraction of the payments (rounded) are spent in a later block
	// by the keyring: half to a foreign script, the rest minus the fee to
	// the next change address (branch 1, indexes in order). A third of
	// the spends also take the oldest unspent change output as a second
	// input (multi-input transactions for clustering).
	SpendFraction float64
	// Seed seeds math/rand: the same spec on the same starting chain
	// gives the same structure (txids differ: block times differ).
	Seed int64
	// Progress, when set, is called after each batch of blocks.
	Progress func(done, total int)
}

// Kinds of TruthTx.
const (
	TxPayment = "payment"
	TxSpend   = "spend"
)

// SortTruthTxs orders txs by height, then txid: the order in which two
// scans of one chain compare, as a block's order of transactions is the
// miner's, not the builder's.
func SortTruthTxs(txs []TruthTx) {
	sort.Slice(txs, func(i, j int) bool {
		if txs[i].Height != txs[j].Height {
			return txs[i].Height < txs[j].Height
		}
		return txs[i].Txid.String() < txs[j].Txid.String()
	})
}

// TruthTx is one wallet transaction of a built chain.
type TruthTx struct {
	Txid      chainhash.Hash `json:"txid"`
	Height    int32          `json:"height"`
	BlockHash chainhash.Hash `json:"block_hash"`
	// Delta is the net satoshi change to the wallet.
	Delta int64  `json:"delta"`
	Kind  string `json:"kind"`
}

// TruthAddress is what happened to one wallet address.
type TruthAddress struct {
	Address string `json:"address"`
	Branch  uint32 `json:"branch"`
	Index   uint32 `json:"index"`
	// Received is the sum of outputs paying it, Spent the sum of those
	// spent; Net = Received - Spent is its balance.
	Received int64 `json:"received"`
	Spent    int64 `json:"spent"`
	Net      int64 `json:"net"`
	// Payments counts outputs paying it; FirstHeight is the first one's
	// height.
	Payments    int   `json:"payments"`
	FirstHeight int32 `json:"first_height"`
}

// TruthUTXO is one unspent wallet output.
type TruthUTXO struct {
	Txid    chainhash.Hash `json:"txid"`
	Vout    uint32         `json:"vout"`
	Value   int64          `json:"value"`
	Address string         `json:"address"`
	Height  int32          `json:"height"`
}

// OutPoint returns the output's outpoint.
func (u TruthUTXO) OutPoint() wire.OutPoint { return wire.OutPoint{Hash: u.Txid, Index: u.Vout} }

// Truth is the ground truth of a built chain from the wallet's view.
type Truth struct {
	Network string `json:"network"`
	Seed    int64  `json:"seed"`
	Purpose uint32 `json:"purpose"`
	// Xpub is the keyring's account key for Purpose, as the wallet takes
	// it; empty for PurposeMultisig, whose wallet is Descriptor.
	Xpub       string `json:"xpub"`
	Descriptor string `json:"descriptor,omitempty"`
	// StartHeight is the tip before BuildChain; the wallet's transactions
	// are all above it (a birthday of StartHeight+1 is safe).
	StartHeight int32          `json:"start_height"`
	TipHeight   int32          `json:"tip_height"`
	TipHash     chainhash.Hash `json:"tip_hash"`
	// NoiseTxs counts the non-wallet transactions mined.
	NoiseTxs int `json:"noise_txs"`
	// Txs are the wallet's transactions by height (then block order).
	Txs []TruthTx `json:"txs"`
	// Addresses are the wallet addresses that received anything, receive
	// branch first, by index.
	Addresses []TruthAddress `json:"addresses"`
	// UTXOs are the unspent wallet outputs, by height then outpoint.
	UTXOs []TruthUTXO `json:"utxos"`
	// Balance is the sum of UTXOs (all confirmed, none coinbase).
	Balance int64 `json:"balance"`
}

// setKeys sets what a watch-only wallet of spec's keyring takes: Xpub,
// or Descriptor for the multisig wallet.
func (t *Truth) setKeys(spec ChainSpec) error {
	var err error
	switch {
	case spec.Keyring == nil:
	case spec.Purpose == PurposeMultisig:
		t.Descriptor, err = spec.Keyring.MultisigDescriptor()
	default:
		t.Xpub, err = spec.Keyring.Xpub(spec.Purpose)
	}
	return err
}

// WriteFile saves the truth as indented JSON.
func (t *Truth) WriteFile(path string) error {
	data, err := json.MarshalIndent(t, "", "  ")
	if err != nil {
		return fmt.Errorf("testnet: encode truth: %w", err)
	}
	if err := os.WriteFile(path, append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("testnet: write truth: %w", err)
	}
	return nil
}

// ReadTruth loads a truth file WriteFile saved.
func ReadTruth(path string) (*Truth, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("testnet: read truth: %w", err)
	}
	var t Truth
	if err := json.Unmarshal(data, &t); err != nil {
		return nil, fmt.Errorf("testnet: decode truth %s: %w", path, err)
	}
	return &t, nil
}

// plannedPay is a payment to receive index addr at block index block.
type plannedPay struct {
	block  int
	addr   uint32
	amount int64
	extra  bool // also pays a random foreign output
	spend  int  // block index of its spend, or -1
	op     wire.OutPoint
}

// plan lays out the payments and spends of spec with r.
func plan(spec *ChainSpec, r *rand.Rand) []*plannedPay {
	total := spec.WatchAddrs * spec.PaymentsPerAddr
	blocks := make([]int, total)
	for i := range blocks {
		blocks[i] = r.Intn(spec.Blocks)
	}
	sort.Ints(blocks)
	// Assign addresses: a slot opens the next unused index with
	// probability unused/remaining, else repeats a used address with
	// payments left.
	left := make([]int, spec.WatchAddrs)
	for i := range left {
		left[i] = spec.PaymentsPerAddr
	}
	next, remaining := 0, total
	var open []int // used addresses with payments left
	pays := make([]*plannedPay, total)
	for i, b := range blocks {
		unused := spec.WatchAddrs - next
		var a int
		if unused > 0 && (len(open) == 0 || r.Intn(remaining) < unused) {
			a = next
			next++
			if left[a] > 1 {
				open = append(open, a)
			}
		} else {
			j := r.Intn(len(open))
			a = open[j]
			if left[a] == 1 {
				open = append(open[:j], open[j+1:]...)
			}
		}
		left[a]--
		remaining--
		pays[i] = &plannedPay{
			block:  b,
			addr:   uint32(a),
			amount: int64(10_000 + r.Intn(4_990_000)),
			extra:  r.Intn(3) == 0,
			spend:  -1,
		}
	}
	// Spends: a random subset of the payments not in the last block.
	var spendable []*plannedPay
	for _, p := range pays {
		if p.block < spec.Blocks-1 {
			spendable = append(spendable, p)
		}
	}
	r.Shuffle(len(spendable), func(i, j int) { spendable[i], spendable[j] = spendable[j], spendable[i] })
	n := min(int(math.Round(spec.SpendFraction*float64(total))), len(spendable))
	for _, p := range spendable[:n] {
		p.spend = p.block + 1 + r.Intn(spec.Blocks-1-p.block)
	}
	return pays
}

// chainBuilder carries BuildChain's state.
type chainBuilder struct {
	c      *Chain
	spec   ChainSpec
	r      *rand.Rand
	truth  *Truth
	addrs  map[string]*TruthAddress // by address
	utxos  map[wire.OutPoint]TruthUTXO
	change uint32 // next change index
	// changeOuts are the wallet's unspent change outputs, oldest first:
	// some spends add one as a second input.
	changeOuts  []wire.OutPoint
	changeIndex map[wire.OutPoint]uint32
}

// BuildChain mines spec.Blocks blocks on the node: TxsPerBlock noise
// transactions each, payments to the keyring's first WatchAddrs receive
// addresses, and later spends of SpendFraction of them. It returns the
// ground truth a synced wallet must reproduce. Blocks without
// transactions are mined in batches; each transaction is sent once
// (nothing waits per transaction), and every block is checked to hold
// exactly the transactions sent for it. The same spec on the same
// starting chain gives the same structure on btcd and bcoin.
func (c *Chain) BuildChain(ctx context.Context, spec ChainSpec) (*Truth, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.usable(); err != nil {
		return nil, err
	}
	if err := spec.check(c.Params()); err != nil {
		return nil, err
	}
	_, start, err := c.node.BestBlock()
	if err != nil {
		return nil, err
	}
	if err := c.pruneUnconfirmed(); err != nil {
		return nil, err
	}
	b := &chainBuilder{
		c:     c,
		spec:  spec,
		r:     rand.New(rand.NewSource(spec.Seed)),
		truth: &Truth{Network: c.Params().Name, Seed: spec.Seed, Purpose: spec.Purpose, StartHeight: start},
		addrs: make(map[string]*TruthAddress),
		utxos: make(map[wire.OutPoint]TruthUTXO),

		changeIndex: make(map[wire.OutPoint]uint32),
	}
	if err := b.truth.setKeys(spec); err != nil {
		return nil, err
	}
	if err := b.run(ctx, start); err != nil {
		return nil, err
	}
	return b.finish()
}

// run mines the blocks.
func (b *chainBuilder) run(ctx context.Context, start int32) error {
	spec := &b.spec
	pays := plan(spec, b.r)
	payAt := make(map[int][]*plannedPay)
	spendAt := make(map[int][]*plannedPay)
	for _, p := range pays {
		payAt[p.block] = append(payAt[p.block], p)
		if p.spend >= 0 {
			spendAt[p.spend] = append(spendAt[p.spend], p)
		}
	}
	for i := 0; i < spec.Blocks; {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("testnet: build chain: %w", err)
		}
		if spec.TxsPerBlock == 0 && len(payAt[i]) == 0 && len(spendAt[i]) == 0 {
			// A run of empty blocks: one generate call.
			j := i + 1
			for j < spec.Blocks && len(payAt[j]) == 0 && len(spendAt[j]) == 0 {
				j++
			}
			if _, _, err := b.c.mineLocked(ctx, b.c.node, j-i); err != nil {
				return err
			}
			i = j
		} else {
			if err := b.block(ctx, start+int32(i)+1, payAt[i], spendAt[i]); err != nil {
				return fmt.Errorf("testnet: build chain block %d: %w", i, err)
			}
			i++
		}
		if spec.Progress != nil {
			spec.Progress(i, spec.Blocks)
		}
	}
	return nil
}

// pending is a transaction of the block being built, with its effect on
// the wallet.
type pending struct {
	tx    *wire.MsgTx
	kind  string // "" for noise
	delta int64
}

// block sends one block's transactions, mines it and records the truth.
// Each transaction is sent as soon as it is signed; a rejected one stops
// the build.
func (b *chainBuilder) block(ctx context.Context, height int32, pays, spends []*plannedPay) error {
	c, spec := b.c, &b.spec
	var txs []pending
	// send broadcasts one transaction; a rejected one is undone (the
	// earlier ones are in the mempool, the funder's view stays true).
	send := func(pt pending) error {
		if err := c.node.SendTx(pt.tx); err != nil {
			c.f.unapply(pt.tx)
			return err
		}
		txs = append(txs, pt)
		return nil
	}
	for _, p := range pays {
		tx, err := payTx(c.f, spec, b.r, p)
		if err != nil {
			return err
		}
		if err := send(pending{tx, TxPayment, p.amount}); err != nil {
			return err
		}
	}
	for range spec.TxsPerBlock {
		tx, err := c.f.build(noiseOutputs(b.r))
		if err != nil {
			return err
		}
		if err := send(pending{tx: tx}); err != nil {
			return err
		}
	}
	for _, p := range spends {
		tx, delta, err := b.spend(p)
		if err != nil {
			return err
		}
		if err := send(pending{tx, TxSpend, delta}); err != nil {
			return err
		}
	}
	hashes, blocks, err := c.mineLocked(ctx, c.node, 1)
	if err != nil {
		return err
	}
	blk := blocks[0]
	if got := len(blk.Transactions) - 1; got != len(txs) {
		return fmt.Errorf("testnet: block %s at height %d has %d transactions, sent %d", hashes[0], height, got, len(txs))
	}
	sent := make(map[chainhash.Hash]bool, len(txs))
	for _, pt := range txs {
		sent[pt.tx.TxHash()] = true
	}
	for _, tx := range blk.Transactions[1:] {
		if !sent[tx.TxHash()] {
			return fmt.Errorf("testnet: block %s at height %d has unsent transaction %s", hashes[0], height, tx.TxHash())
		}
	}
	for _, pt := range txs {
		if pt.kind == "" {
			b.truth.NoiseTxs++
			continue
		}
		b.record(pt, height, *hashes[0])
	}
	return nil
}

// check fills in spec's defaults (BIP84, one payment per address) and
// refuses a spec a chain on a node of params cannot be built from.
func (spec *ChainSpec) check(params *chaincfg.Params) error {
	if spec.Purpose == 0 {
		spec.Purpose = PurposeBIP84
	}
	if spec.PaymentsPerAddr <= 0 {
		spec.PaymentsPerAddr = 1
	}
	switch {
	case spec.Blocks < 1 || spec.TxsPerBlock < 0 || spec.WatchAddrs < 0:
		return fmt.Errorf("%w: blocks %d, txs per block %d, addresses %d", ErrBadSpec, spec.Blocks, spec.TxsPerBlock, spec.WatchAddrs)
	case spec.SpendFraction < 0 || spec.SpendFraction > 1 || math.IsNaN(spec.SpendFraction):
		return fmt.Errorf("%w: spend fraction %v not in [0, 1]", ErrBadSpec, spec.SpendFraction)
	case spec.WatchAddrs > 0 && spec.Keyring == nil:
		return fmt.Errorf("%w: watched addresses need a keyring", ErrBadSpec)
	case spec.Keyring != nil && spec.Keyring.Params().Net != params.Net:
		return fmt.Errorf("%w: keyring is for %s, node for %s", ErrBadSpec, spec.Keyring.Params().Name, params.Name)
	}
	return nil
}

// payTx builds the funder's payment p to its external address of spec's
// keyring (with, when p.extra, a noise output in random order, so the
// wallet's output is not always first) and sets p.op to the wallet's
// output.
func payTx(f *funder, spec *ChainSpec, r *rand.Rand, p *plannedPay) (*wire.MsgTx, error) {
	script, err := spec.Keyring.PkScript(spec.Purpose, BranchExternal, p.addr)
	if err != nil {
		return nil, err
	}
	outs := []*wire.TxOut{wire.NewTxOut(p.amount, script)}
	if p.extra {
		outs = append(outs, noiseOutputs(r)[0])
		if r.Intn(2) == 0 {
			outs[0], outs[1] = outs[1], outs[0]
		}
	}
	tx, err := f.build(outs)
	if err != nil {
		return nil, err
	}
	for i, o := range tx.TxOut {
		if o.Value == p.amount && string(o.PkScript) == string(script) {
			p.op = wire.OutPoint{Hash: tx.TxHash(), Index: uint32(i)}
		}
	}
	return tx, nil
}

// spend signs the keyring's spend of p's output: half to a foreign
// script, the rest minus the fee to the next change address.
func (b *chainBuilder) spend(p *plannedPay) (*wire.MsgTx, int64, error) {
	spec := &b.spec
	prev, ok := b.utxos[p.op]
	if !ok {
		return nil, 0, fmt.Errorf("testnet: planned spend of unknown output %v", p.op)
	}
	change, err := spec.Keyring.PkScript(spec.Purpose, BranchInternal, b.change)
	if err != nil {
		return nil, 0, err
	}
	b.change++
	first, err := spec.Keyring.prevOutFor(p.op, prev.Value, KeyPath{spec.Purpose, BranchExternal, p.addr})
	if err != nil {
		return nil, 0, err
	}
	ins := []prevOut{first}
	total := prev.Value
	// A third of the spends also sweep the oldest unspent change output:
	// multi-input transactions, the common-input-ownership pattern.
	if len(b.changeOuts) > 0 && b.r.Intn(3) == 0 {
		op := b.changeOuts[0]
		b.changeOuts = b.changeOuts[1:]
		c := b.utxos[op]
		in, err := spec.Keyring.prevOutFor(op, c.Value, KeyPath{spec.Purpose, BranchInternal, b.changeIndex[op]})
		if err != nil {
			return nil, 0, err
		}
		ins = append(ins, in)
		total += c.Value
	}
	foreign := noiseOutputs(b.r)[0]
	foreign.Value = prev.Value / 2
	outs := []*wire.TxOut{foreign, wire.NewTxOut(0, change)}
	scripts := make([][]byte, len(ins))
	for i, in := range ins {
		scripts[i] = in.script
	}
	fee := FeeRate * estimateVsize(scripts, outs)
	outs[1].Value = total - foreign.Value - fee
	if b.r.Intn(2) == 0 {
		outs[0], outs[1] = outs[1], outs[0]
	}
	tx := wire.NewMsgTx(wire.TxVersion)
	for _, in := range ins {
		tx.AddTxIn(wire.NewTxIn(&in.op, nil, nil))
	}
	for _, o := range outs {
		tx.AddTxOut(o)
	}
	if err := signTx(tx, ins); err != nil {
		return nil, 0, err
	}
	return tx, -(foreign.Value + fee), nil
}

// record applies a wallet transaction to the truth.
func (b *chainBuilder) record(pt pending, height int32, block chainhash.Hash) {
	spec := &b.spec
	txid := pt.tx.TxHash()
	b.truth.Txs = append(b.truth.Txs, TruthTx{Txid: txid, Height: height, BlockHash: block, Delta: pt.delta, Kind: pt.kind})
	for _, in := range pt.tx.TxIn {
		if u, ok := b.utxos[in.PreviousOutPoint]; ok {
			b.addrs[u.Address].Spent += u.Value
			delete(b.utxos, in.PreviousOutPoint)
		}
	}
	for i, o := range pt.tx.TxOut {
		path, ok := spec.Keyring.Lookup(o.PkScript)
		if !ok || path.Purpose != spec.Purpose {
			continue
		}
		addr, err := spec.Keyring.Address(path.Purpose, path.Branch, path.Index)
		if err != nil {
			continue // cannot happen: Lookup found it
		}
		a := b.addrs[addr.EncodeAddress()]
		if a == nil {
			a = &TruthAddress{Address: addr.EncodeAddress(), Branch: path.Branch, Index: path.Index, FirstHeight: height}
			b.addrs[a.Address] = a
		}
		a.Received += o.Value
		a.Payments++
		op := wire.OutPoint{Hash: txid, Index: uint32(i)}
		if path.Branch == BranchInternal {
			b.changeOuts = append(b.changeOuts, op)
			b.changeIndex[op] = path.Index
		}
		b.utxos[op] = TruthUTXO{Txid: txid, Vout: uint32(i), Value: o.Value, Address: a.Address, Height: height}
	}
}

// finish sorts and totals the truth.
func (b *chainBuilder) finish() (*Truth, error) {
	t := b.truth
	tipHash, tip, err := b.c.node.BestBlock()
	if err != nil {
		return nil, err
	}
	t.TipHeight, t.TipHash = tip, *tipHash
	t.settle(b.addrs, b.utxos)
	return t, nil
}

// settle fills the truth's addresses (with their net) and UTXOs (with the
// balance) from what a chain walk collected, in their documented orders.
func (t *Truth) settle(addrs map[string]*TruthAddress, utxos map[wire.OutPoint]TruthUTXO) {
	for _, a := range addrs {
		a.Net = a.Received - a.Spent
		t.Addresses = append(t.Addresses, *a)
	}
	sort.Slice(t.Addresses, func(i, j int) bool {
		ai, aj := t.Addresses[i], t.Addresses[j]
		if ai.Branch != aj.Branch {
			return ai.Branch < aj.Branch
		}
		return ai.Index < aj.Index
	})
	for _, u := range utxos {
		t.UTXOs = append(t.UTXOs, u)
		t.Balance += u.Value
	}
	sort.Slice(t.UTXOs, func(i, j int) bool {
		ui, uj := t.UTXOs[i], t.UTXOs[j]
		if ui.Height != uj.Height {
			return ui.Height < uj.Height
		}
		return outpointLess(ui.OutPoint(), uj.OutPoint())
	})
}
