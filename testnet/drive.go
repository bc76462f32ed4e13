package testnet

import (
	"context"
	crand "crypto/rand"
	"errors"
	"fmt"
	"math/rand"
	"sync"
	"time"

	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/txscript"
	"github.com/btcsuite/btcd/wire"
)

// Chain is a full node plus an in-memory funding wallet whose key
// receives the node's coinbases: payments, noise, spends of a Keyring's
// outputs, scenario chains (BuildChain), the node's view of a wallet
// (ScanTruth) and reorganisations (Reorg). It is the one driver under
// btcd's Harness and bcoin's (testnet/bcoin), which only start their
// nodes and say how their node makes a competing branch (Brancher): a
// scenario written against a *Chain runs unchanged on either. Methods
// are safe for concurrent use but serialize on one mutex.
type Chain struct {
	mu     sync.Mutex
	params *chaincfg.Params
	node   FullNode
	br     Brancher
	stop   func() error
	f      *funder
	rng    *rand.Rand
	closed bool
}

// ChainConfig is what a harness gives NewChain besides its node.
type ChainConfig struct {
	// Brancher makes Reorg's competing branch on this kind of node; nil
	// makes Reorg fail with ErrBadSpec.
	Brancher Brancher
	// Close stops what the harness started, the node included; nil
	// stops the node.
	Close func() error
	// Bare skips mining the setup blocks (see Options.Bare).
	Bare bool
}

// SegwitHeight returns the height from which segwit (and taproot) rules
// apply on params with an always-signalling miner (btcd's and bcoin's):
// three BIP9 windows (DEFINED, STARTED, LOCKED_IN).
func SegwitHeight(params *chaincfg.Params) int32 {
	return 3 * int32(params.MinerConfirmationWindow)
}

// MatureExtra is how many blocks past coinbase maturity the setup mines,
// so the funder starts with several spendable coinbases.
const MatureExtra = 10

// NewChain wraps a started node with the funding wallet: it scans the
// node's chain for funding coins (an existing chain) and unless cfg.Bare
// mines until the first coinbases are spendable (CoinbaseMaturity +
// MatureExtra) and segwit and taproot are active (SegwitHeight). When an
// existing chain's tip is older than StaleTip it mines one block, since
// btcd ignores getheaders while its tip is more than 24 hours old. On
// failure it closes what cfg.Close stops.
func NewChain(ctx context.Context, node FullNode, cfg ChainConfig) (*Chain, error) {
	c := &Chain{params: node.Params(), node: node, br: cfg.Brancher, stop: cfg.Close, rng: rand.New(rand.NewSource(1))}
	if c.stop == nil {
		c.stop = node.Stop
	}
	var err error
	if c.f, err = newFunder(c.params); err != nil {
		return nil, errors.Join(err, c.Close())
	}
	if err := c.setup(ctx, cfg.Bare); err != nil {
		return nil, errors.Join(err, c.Close())
	}
	return c, nil
}

// setup scans an existing chain and mines the maturity blocks.
func (c *Chain) setup(ctx context.Context, bare bool) error {
	_, tip, err := c.node.BestBlock()
	if err != nil {
		return err
	}
	if err := c.scanChain(ctx, 1, tip); err != nil {
		return err
	}
	if tip > 0 {
		stale, err := c.tipStale()
		if err != nil {
			return err
		}
		if stale {
			if _, err := c.Mine(1); err != nil {
				return err
			}
			tip++
		}
	}
	params := c.params
	want := max(int32(params.CoinbaseMaturity)+MatureExtra, SegwitHeight(params))
	if bare || tip >= want {
		return nil
	}
	// The setup blocks hold nothing but coinbases: fetch only the first
	// setupCoinbases of them (plenty of funds); later coinbases are left
	// unknown to the funder, which only means it never spends them.
	hashes, err := c.node.GenerateBlocks(ctx, int(want-tip))
	if err != nil {
		return err
	}
	for i, hash := range hashes[:min(len(hashes), setupCoinbases)] {
		b, err := c.node.Block(hash)
		if err != nil {
			return err
		}
		c.f.applyBlock(b, tip+1+int32(i))
	}
	c.f.tip = want
	return nil
}

// setupCoinbases is how many of the setup blocks the funder reads.
const setupCoinbases = 60

// StaleTip is the tip age past which NewChain mines a fresh block on an
// existing chain.
const StaleTip = 12 * time.Hour

// tipStale reports whether the node's tip is older than StaleTip.
func (c *Chain) tipStale() (bool, error) {
	hash, _, err := c.node.BestBlock()
	if err != nil {
		return false, err
	}
	b, err := c.node.Block(hash)
	if err != nil {
		return false, err
	}
	return time.Since(b.Header.Timestamp) > StaleTip, nil
}

// scanChain applies the blocks at heights from..to to the funder.
func (c *Chain) scanChain(ctx context.Context, from, to int32) error {
	for height := from; height <= to; height++ {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("testnet: scanning chain: %w", err)
		}
		_, b, err := c.node.BlockAt(height)
		if err != nil {
			return err
		}
		c.f.applyBlock(b, height)
	}
	c.f.tip = max(c.f.tip, to)
	return nil
}

// Node returns the chain's node (btcd's Harness: a new one after
// RestartNode).
func (c *Chain) Node() FullNode {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.node
}

// P2PAddr returns the node's peer-to-peer address, "127.0.0.1:port".
func (c *Chain) P2PAddr() string { return c.Node().P2PAddr() }

// BestBlock returns the hash and height of the node's tip.
func (c *Chain) BestBlock() (*chainhash.Hash, int32, error) { return c.Node().BestBlock() }

// Params returns the chain parameters.
func (c *Chain) Params() *chaincfg.Params { return c.params }

// FunderAddress returns the funding wallet's address (the coinbases'
// default recipient).
func (c *Chain) FunderAddress() btcutil.Address {
	addr, _ := funderAddress(c.params)
	return addr
}

// FunderBalance returns the funding wallet's spendable satoshis.
func (c *Chain) FunderBalance() btcutil.Amount {
	c.mu.Lock()
	defer c.mu.Unlock()
	return btcutil.Amount(c.f.balance())
}

// usable returns ErrStopped after Close.
func (c *Chain) usable() error {
	if c.closed {
		return ErrStopped
	}
	return nil
}

// Mine mines n blocks (with the mempool's transactions) and records
// their funder coins.
func (c *Chain) Mine(n int) ([]*chainhash.Hash, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.usable(); err != nil {
		return nil, err
	}
	hashes, _, err := c.mineLocked(context.Background(), c.node, n)
	return hashes, err
}

// mineLocked mines n blocks on node, applies them to the funder and
// returns their hashes and the blocks.
func (c *Chain) mineLocked(ctx context.Context, node FullNode, n int) ([]*chainhash.Hash, []*wire.MsgBlock, error) {
	if n <= 0 {
		return nil, nil, nil
	}
	_, tip, err := node.BestBlock()
	if err != nil {
		return nil, nil, err
	}
	hashes, err := node.GenerateBlocks(ctx, n)
	if err != nil {
		return nil, nil, err
	}
	blocks := make([]*wire.MsgBlock, len(hashes))
	for i, hash := range hashes {
		if blocks[i], err = node.Block(hash); err != nil {
			return nil, nil, err
		}
		c.f.applyBlock(blocks[i], tip+1+int32(i))
	}
	return hashes, blocks, nil
}

// NewTx builds and signs a transaction from the funding wallet paying
// outputs (plus change), records its coins as pending, and does not
// broadcast it: for Reorg's branch transactions and for DoubleSpend.
func (c *Chain) NewTx(outputs []*wire.TxOut) (*wire.MsgTx, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.usable(); err != nil {
		return nil, err
	}
	return c.f.build(outputs)
}

// DoubleSpend builds (without broadcasting) a transaction that spends the
// same funding inputs as tx, which NewTx or Pay made, and pays outputs
// instead.
func (c *Chain) DoubleSpend(tx *wire.MsgTx, outputs []*wire.TxOut) (*wire.MsgTx, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.usable(); err != nil {
		return nil, err
	}
	return c.f.conflict(tx, outputs)
}

// Pay funds, signs and broadcasts a transaction paying outputs (with
// change to the funder); it is in the node's mempool when Pay returns
// and stays there until Mine.
func (c *Chain) Pay(outputs []*wire.TxOut) (*wire.MsgTx, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.payLocked(outputs)
}

func (c *Chain) payLocked(outputs []*wire.TxOut) (*wire.MsgTx, error) {
	if err := c.usable(); err != nil {
		return nil, err
	}
	for attempt := 0; ; attempt++ {
		tx, err := c.f.build(outputs)
		if err != nil {
			return nil, err
		}
		sendErr := c.node.SendTx(tx)
		if sendErr == nil {
			return tx, nil
		}
		c.f.unapply(tx)
		// A coin the node does not know (change of a NewTx that was
		// never broadcast, or removed by a reorg the harness did not
		// make) is dropped, and the payment tried again with others.
		dropped, err := c.dropUnknownInputs(tx)
		if err != nil {
			return nil, errors.Join(sendErr, err)
		}
		if dropped == 0 || attempt == maxPayAttempts-1 {
			return nil, sendErr
		}
	}
}

// pruneUnconfirmed forgets unconfirmed funder coins the node has
// neither in its mempool nor in its UTXO set.
func (c *Chain) pruneUnconfirmed() error {
	for op, coin := range c.f.coins {
		if coin.height != unconfirmed {
			continue
		}
		res, err := c.node.Unspent(op, true)
		if err != nil {
			return err
		}
		if res == nil {
			delete(c.f.coins, op)
		}
	}
	return nil
}

// maxPayAttempts bounds how often Pay re-selects coins after dropping
// ones the node does not know.
const maxPayAttempts = 5

// dropUnknownInputs forgets the funder coins tx spends that the node has
// neither in its UTXO set nor in its mempool, and returns how many.
func (c *Chain) dropUnknownInputs(tx *wire.MsgTx) (int, error) {
	dropped := 0
	for _, in := range tx.TxIn {
		op := in.PreviousOutPoint
		if _, ok := c.f.coins[op]; !ok {
			continue
		}
		res, err := c.node.Unspent(op, true)
		if err != nil {
			return dropped, err
		}
		if res == nil {
			delete(c.f.coins, op)
			dropped++
		}
	}
	return dropped, nil
}

// Broadcast sends a transaction (e.g. from NewTx or DoubleSpend) to the
// node's mempool.
func (c *Chain) Broadcast(tx *wire.MsgTx) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.usable(); err != nil {
		return err
	}
	return c.node.SendTx(tx)
}

// PayScript pays amt to an output script.
func (c *Chain) PayScript(pkScript []byte, amt btcutil.Amount) (*wire.MsgTx, error) {
	return c.Pay([]*wire.TxOut{wire.NewTxOut(int64(amt), pkScript)})
}

// PayAddress pays amt to addr (in Core's and btcd's format, as the
// Keyring makes them: bcoin takes the script whatever prefix it gives
// the address).
func (c *Chain) PayAddress(addr btcutil.Address, amt btcutil.Amount) (*wire.MsgTx, error) {
	script, err := txscript.PayToAddrScript(addr)
	if err != nil {
		return nil, fmt.Errorf("testnet: script of %s: %w", addr, err)
	}
	return c.PayScript(script, amt)
}

// Script kinds of RandomScript.
const (
	KindP2PKH  = "p2pkh"
	KindP2WPKH = "p2wpkh"
	KindP2SH   = "p2sh"
	KindP2TR   = "p2tr"
)

// NoiseKinds lists the script kinds noise transactions pay.
var NoiseKinds = []string{KindP2PKH, KindP2WPKH, KindP2SH, KindP2TR}

// RandomScript returns an output script of kind paying random key or
// script hashes (nobody can spend it), drawn from r (crypto/rand when r
// is nil).
func RandomScript(r *rand.Rand, kind string) []byte {
	var b txscript.ScriptBuilder
	switch kind {
	case KindP2PKH:
		b.AddOp(txscript.OP_DUP).AddOp(txscript.OP_HASH160).AddData(randBytes(r, 20)).
			AddOp(txscript.OP_EQUALVERIFY).AddOp(txscript.OP_CHECKSIG)
	case KindP2SH:
		b.AddOp(txscript.OP_HASH160).AddData(randBytes(r, 20)).AddOp(txscript.OP_EQUAL)
	case KindP2TR:
		b.AddOp(txscript.OP_1).AddData(randBytes(r, 32))
	default:
		b.AddOp(txscript.OP_0).AddData(randBytes(r, 20))
	}
	s, _ := b.Script()
	return s
}

// randBytes returns n bytes from r, or from crypto/rand when r is nil.
func randBytes(r *rand.Rand, n int) []byte {
	b := make([]byte, n)
	if r == nil {
		_, _ = crand.Read(b)
	} else {
		_, _ = r.Read(b)
	}
	return b
}

// noiseOutputs returns 1 to 3 outputs (a third of transactions pay
// several) to random scripts of mixed kinds, 5,000 to 500,000 sat each.
func noiseOutputs(r *rand.Rand) []*wire.TxOut {
	n := 1
	if r.Intn(3) == 0 {
		n = 2 + r.Intn(2)
	}
	outs := make([]*wire.TxOut, n)
	for i := range outs {
		kind := NoiseKinds[r.Intn(len(NoiseKinds))]
		outs[i] = wire.NewTxOut(int64(5_000+r.Intn(495_000)), RandomScript(r, kind))
	}
	return outs
}

// Noise broadcasts ntx payments from the funder to fresh random scripts
// of mixed types (P2PKH, P2WPKH, P2SH, P2TR), some with several outputs.
// They stay in the mempool until Mine.
func (c *Chain) Noise(ntx int) ([]*wire.MsgTx, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	txs := make([]*wire.MsgTx, 0, ntx)
	for range ntx {
		tx, err := c.payLocked(noiseOutputs(c.rng))
		if err != nil {
			return txs, err
		}
		txs = append(txs, tx)
	}
	return txs, nil
}

// prevOutput returns the output op refers to, from the node's transaction
// index or mempool (spent or not).
func (c *Chain) prevOutput(op wire.OutPoint) (*wire.TxOut, error) {
	tx, err := c.node.Tx(&op.Hash)
	if err != nil {
		return nil, err
	}
	return outputOf(tx, op)
}

// outputOf returns the output op names in tx, its transaction.
func outputOf(tx *wire.MsgTx, op wire.OutPoint) (*wire.TxOut, error) {
	outs := tx.TxOut
	if int(op.Index) >= len(outs) {
		return nil, fmt.Errorf("%w: outpoint %v: transaction has %d outputs", ErrBadSpec, op, len(outs))
	}
	return outs[op.Index], nil
}

// BuildSpend signs (without broadcasting) a transaction spending
// outpoints, which pay P2PKH, P2WPKH, P2SH-P2WPKH, P2TR or (the multisig
// wallet's, 2 of its 3 cosigners signing) P2WSH scripts of key, to the
// outputs to. What the outputs leave is the fee; it must be at least 1
// sat/vbyte (ErrFeeTooLow).
func (c *Chain) BuildSpend(key *Keyring, outpoints []wire.OutPoint, to []*wire.TxOut) (*wire.MsgTx, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.usable(); err != nil {
		return nil, err
	}
	return buildSpend(c.prevOutput, key, outpoints, to)
}

// buildSpend signs a transaction spending outpoints, whose outputs
// prev looks up on the node, to the outputs to (see BuildSpend).
func buildSpend(prev func(wire.OutPoint) (*wire.TxOut, error), key *Keyring, outpoints []wire.OutPoint, to []*wire.TxOut) (*wire.MsgTx, error) {
	if len(outpoints) == 0 {
		return nil, fmt.Errorf("%w: no outpoints to spend", ErrBadSpec)
	}
	tx := wire.NewMsgTx(wire.TxVersion)
	ins := make([]prevOut, 0, len(outpoints))
	var sum, paid int64
	for _, op := range outpoints {
		out, err := prev(op)
		if err != nil {
			return nil, err
		}
		path, ok := key.Lookup(out.PkScript)
		if !ok {
			return nil, fmt.Errorf("%w: %v pays %x", ErrUnknownKey, op, out.PkScript)
		}
		in, err := key.prevOutFor(op, out.Value, path)
		if err != nil {
			return nil, err
		}
		ins = append(ins, in)
		tx.AddTxIn(wire.NewTxIn(&op, nil, nil))
		sum += out.Value
	}
	for _, o := range to {
		tx.AddTxOut(o)
		paid += o.Value
	}
	if err := signTx(tx, ins); err != nil {
		return nil, err
	}
	if fee, need := sum-paid, vsize(tx); fee < need {
		return nil, fmt.Errorf("%w: inputs %d, outputs %d, fee %d < %d for %d vbytes",
			ErrFeeTooLow, sum, paid, fee, need, need)
	}
	return tx, nil
}

// Spend signs and broadcasts a spend of the keyring's outputs (see
// BuildSpend); it is in the node's mempool when Spend returns and stays
// there until Mine.
func (c *Chain) Spend(key *Keyring, outpoints []wire.OutPoint, to []*wire.TxOut) (*wire.MsgTx, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.usable(); err != nil {
		return nil, err
	}
	tx, err := buildSpend(c.prevOutput, key, outpoints, to)
	if err != nil {
		return nil, err
	}
	if err := c.node.SendTx(tx); err != nil {
		return nil, err
	}
	c.f.applyTx(tx, unconfirmed, false)
	return tx, nil
}

// SpendFee returns the fee Spend needs (at FeeRate) for a transaction
// spending inputs of the given scripts to outputs.
func SpendFee(inScripts [][]byte, to []*wire.TxOut) btcutil.Amount {
	return btcutil.Amount(FeeRate * estimateVsize(inScripts, to))
}

// ScanTruth is the package's ScanTruth on the chain's node.
func (c *Chain) ScanTruth(ctx context.Context, key *Keyring, purpose uint32, from int32) (*Truth, error) {
	return ScanTruth(ctx, c.Node(), key, purpose, from)
}

// Close stops the harness's nodes (every node it started); it is
// idempotent.
func (c *Chain) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil
	}
	c.closed = true
	return c.stop()
}
