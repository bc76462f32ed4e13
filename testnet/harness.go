package testnet

import (
	"context"
	crand "crypto/rand"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/txscript"
	"github.com/btcsuite/btcd/wire"
)

// Options configures a Harness.
type Options struct {
	// Network is "regtest" (the default) or "simnet".
	Network string
	// DataDir is the node's data directory ("" = a temporary one). With
	// simnet an existing chain is reused and scanned for funding coins.
	DataDir string
	// Log receives btcd's output as Config.Log describes: an *os.File
	// live, another writer when the nodes stop, nil discards it.
	Log io.Writer
	// Bare skips mining the setup blocks. The zero Options mines until
	// the first coinbases are spendable (CoinbaseMaturity+MatureExtra)
	// and segwit and taproot are active (SegwitHeight: 432 blocks on
	// regtest, 300 on simnet), so Pay, Noise and Spend work at once. A
	// Bare harness has no funds and no segwit until it mines that far.
	Bare bool
	// Args are extra btcd flags for the node (and the reorg node).
	Args []string
	// V2Transport starts the node with --v2transport (Config.V2Transport).
	V2Transport bool
}

// SegwitHeight returns the height from which segwit (and taproot) rules
// apply on params with btcd's always-signalling miner: three BIP9 windows
// (DEFINED, STARTED, LOCKED_IN).
func SegwitHeight(params *chaincfg.Params) int32 {
	return 3 * int32(params.MinerConfirmationWindow)
}

// MatureExtra is how many blocks past coinbase maturity New mines, so the
// funder starts with several spendable coinbases.
const MatureExtra = 10

// Harness is a btcd node plus an in-memory funding wallet whose key
// receives the node's coinbases. Methods are safe for concurrent use but
// serialize on one mutex.
type Harness struct {
	mu     sync.Mutex
	opts   Options
	params *chaincfg.Params
	node   *Node
	node2  *Node   // the reorg partner, started by the first Reorg
	extra  []*Node // started by StartPeer
	f      *funder
	rng    *rand.Rand
	ownDir string // temporary simnet data directory, removed by Close
	closed bool
}

// New starts a node, scans its chain for funding coins (an existing
// simnet DataDir), and unless opts.Bare mines until coinbases are
// spendable.
//
// A simnet harness without a DataDir gets a temporary one that survives
// RestartNode and is removed by Close. When an existing chain's tip is
// older than StaleTip, New mines one block, because btcd ignores
// getheaders while its tip is more than 24 hours old.
func New(ctx context.Context, opts Options) (*Harness, error) {
	var ownDir string
	if opts.Network == Simnet && opts.DataDir == "" {
		dir, err := os.MkdirTemp("", "bloomwatch-simnet-")
		if err != nil {
			return nil, fmt.Errorf("testnet: simnet data dir: %w", err)
		}
		ownDir, opts.DataDir = dir, filepath.Join(dir, "data")
	}
	node, err := StartNode(ctx, Config{Network: opts.Network, DataDir: opts.DataDir, Log: opts.Log, Args: opts.Args, V2Transport: opts.V2Transport})
	if err != nil {
		if ownDir != "" {
			err = errors.Join(err, os.RemoveAll(ownDir))
		}
		return nil, err
	}
	h := &Harness{opts: opts, params: node.Params(), node: node, ownDir: ownDir, rng: rand.New(rand.NewSource(1))}
	if h.f, err = newFunder(node.Params()); err != nil {
		return nil, errors.Join(err, node.Stop())
	}
	if err := h.setup(ctx); err != nil {
		return nil, errors.Join(err, h.Close())
	}
	return h, nil
}

// setup scans an existing chain and mines the maturity blocks.
func (h *Harness) setup(ctx context.Context) error {
	_, tip, err := h.node.BestBlock()
	if err != nil {
		return err
	}
	if err := h.scanChain(ctx, 1, tip); err != nil {
		return err
	}
	if tip > 0 {
		stale, err := h.tipStale()
		if err != nil {
			return err
		}
		if stale {
			if _, err := h.Mine(1); err != nil {
				return err
			}
			tip++
		}
	}
	want := max(int32(h.node.Params().CoinbaseMaturity)+MatureExtra, SegwitHeight(h.node.Params()))
	if h.opts.Bare || tip >= want {
		return nil
	}
	// The setup blocks hold nothing but coinbases: fetch only the first
	// setupCoinbases of them (plenty of funds); later coinbases are left
	// unknown to the funder, which only means it never spends them.
	hashes, err := h.node.Generate(uint32(want - tip))
	if err != nil {
		return err
	}
	for i, hash := range hashes[:min(len(hashes), setupCoinbases)] {
		b, err := h.node.RPC().GetBlock(hash)
		if err != nil {
			return fmt.Errorf("testnet: getblock %s: %w", hash, err)
		}
		h.f.applyBlock(b, tip+1+int32(i))
	}
	h.f.tip = want
	return nil
}

// setupCoinbases is how many of New's setup blocks the funder reads.
const setupCoinbases = 60

// StaleTip is the tip age past which New mines a fresh block on an
// existing chain.
const StaleTip = 12 * time.Hour

// tipStale reports whether the main node's tip is older than StaleTip.
func (h *Harness) tipStale() (bool, error) {
	hash, _, err := h.node.BestBlock()
	if err != nil {
		return false, err
	}
	hdr, err := h.node.RPC().GetBlockHeader(hash)
	if err != nil {
		return false, fmt.Errorf("testnet: getblockheader %s: %w", hash, err)
	}
	return time.Since(hdr.Timestamp) > StaleTip, nil
}

// RestartNode stops the main node and starts it again on the same data
// directory and ports (so SPV clients can reconnect to the same address),
// then rebuilds the funder from the chain (the mempool does not survive).
// It needs simnet: btcd deletes a regtest database at every start.
func (h *Harness) RestartNode(ctx context.Context) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := h.usable(); err != nil {
		return err
	}
	if h.node.Params().Name != Simnet {
		return fmt.Errorf("%w: restart needs simnet (btcd deletes its regtest database at start)", ErrBadSpec)
	}
	cfg := h.node.Config()
	if err := h.node.Stop(); err != nil {
		return fmt.Errorf("testnet: restart: %w", err)
	}
	node, err := StartNode(ctx, cfg)
	if err != nil {
		return fmt.Errorf("testnet: restart: %w", err)
	}
	h.node = node
	if h.f, err = newFunder(node.Params()); err != nil {
		return err
	}
	_, tip, err := node.BestBlock()
	if err != nil {
		return err
	}
	if err := h.scanChain(ctx, 1, tip); err != nil {
		return err
	}
	if h.node2 != nil {
		if err := h.node2.DisconnectFromCtx(ctx, node); err != nil {
			return err
		}
		return h.ensureNode2(ctx)
	}
	return nil
}

// scanChain applies the blocks at heights from..to to the funder.
func (h *Harness) scanChain(ctx context.Context, from, to int32) error {
	rpc := h.node.RPC()
	for height := from; height <= to; height++ {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("testnet: scanning chain: %w", err)
		}
		hash, err := rpc.GetBlockHash(int64(height))
		if err != nil {
			return fmt.Errorf("testnet: getblockhash %d: %w", height, err)
		}
		b, err := rpc.GetBlock(hash)
		if err != nil {
			return fmt.Errorf("testnet: getblock %s: %w", hash, err)
		}
		h.f.applyBlock(b, height)
	}
	h.f.tip = max(h.f.tip, to)
	return nil
}

// NewT is New for tests: it fails t on error and closes the harness in
// t.Cleanup. btcd's output goes to t.Log when the test fails.
func NewT(t testing.TB, opts Options) *Harness {
	t.Helper()
	var buf *tailBuffer
	if opts.Log == nil {
		buf = &tailBuffer{}
		opts.Log = buf
	}
	h, err := New(context.Background(), opts)
	if err != nil {
		t.Fatalf("testnet.New: %v", err)
	}
	t.Cleanup(func() {
		if err := h.Close(); err != nil {
			t.Errorf("testnet: close harness: %v", err)
		}
		if buf != nil && t.Failed() {
			t.Logf("btcd output (tail):\n%s", buf.String())
		}
	})
	return h
}

// tailBuffer keeps the last 16 KiB written to it.
type tailBuffer struct {
	mu  sync.Mutex
	buf []byte
}

const tailBufferSize = 16 << 10

// Write implements io.Writer.
func (b *tailBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf = append(b.buf, p...)
	if len(b.buf) > tailBufferSize {
		b.buf = append([]byte(nil), b.buf[len(b.buf)-tailBufferSize:]...)
	}
	return len(p), nil
}

// String returns the kept bytes.
func (b *tailBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return string(b.buf)
}

// Node returns the harness's main node (a new one after RestartNode).
func (h *Harness) Node() *Node {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.node
}

// ReorgNode returns the second node Reorg uses, or nil before the first
// Reorg. It stays connected to the main node, so it can serve as a second
// peer with the same chain.
func (h *Harness) ReorgNode() *Node {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.node2
}

// Params returns the chain parameters.
func (h *Harness) Params() *chaincfg.Params { return h.params }

// FunderAddress returns the funding wallet's address (the coinbases'
// default recipient).
func (h *Harness) FunderAddress() btcutil.Address {
	addr, _ := funderAddress(h.params)
	return addr
}

// FunderBalance returns the funding wallet's spendable satoshis.
func (h *Harness) FunderBalance() btcutil.Amount {
	h.mu.Lock()
	defer h.mu.Unlock()
	return btcutil.Amount(h.f.balance())
}

// usable returns ErrStopped after Close.
func (h *Harness) usable() error {
	if h.closed {
		return ErrStopped
	}
	return nil
}

// Mine mines n blocks on the main node (with the mempool's transactions)
// and records their funder coins.
func (h *Harness) Mine(n int) ([]*chainhash.Hash, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.mineLocked(h.node, n)
}

// mineLocked mines n blocks on node and applies them to the funder.
func (h *Harness) mineLocked(node *Node, n int) ([]*chainhash.Hash, error) {
	if err := h.usable(); err != nil {
		return nil, err
	}
	if n <= 0 {
		return nil, nil
	}
	hashes, err := node.Generate(uint32(n))
	if err != nil {
		return nil, err
	}
	_, tip, err := node.BestBlock()
	if err != nil {
		return nil, err
	}
	base := tip - int32(len(hashes)) + 1
	for i, hash := range hashes {
		b, err := node.RPC().GetBlock(hash)
		if err != nil {
			return nil, fmt.Errorf("testnet: getblock %s: %w", hash, err)
		}
		h.f.applyBlock(b, base+int32(i))
	}
	return hashes, nil
}

// NewTx builds and signs a transaction from the funding wallet paying
// outputs (plus change), records its coins as pending, and does not
// broadcast it: for Reorg's branch transactions and for DoubleSpend.
func (h *Harness) NewTx(outputs []*wire.TxOut) (*wire.MsgTx, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := h.usable(); err != nil {
		return nil, err
	}
	return h.f.build(outputs)
}

// DoubleSpend builds (without broadcasting) a transaction that spends the
// same funding inputs as tx, which NewTx or Pay made, and pays outputs
// instead.
func (h *Harness) DoubleSpend(tx *wire.MsgTx, outputs []*wire.TxOut) (*wire.MsgTx, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := h.usable(); err != nil {
		return nil, err
	}
	return h.f.conflict(tx, outputs)
}

// Pay funds, signs and broadcasts a transaction paying outputs (with
// change to the funder); it stays in the mempool until Mine.
func (h *Harness) Pay(outputs []*wire.TxOut) (*wire.MsgTx, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.payLocked(outputs)
}

func (h *Harness) payLocked(outputs []*wire.TxOut) (*wire.MsgTx, error) {
	if err := h.usable(); err != nil {
		return nil, err
	}
	for attempt := 0; ; attempt++ {
		tx, err := h.f.build(outputs)
		if err != nil {
			return nil, err
		}
		sendErr := sendTx(h.node, tx)
		if sendErr == nil {
			return tx, nil
		}
		h.f.unapply(tx)
		// A coin the node does not know (change of a NewTx that was
		// never broadcast, or removed by a reorg the harness did not
		// make) is dropped, and the payment tried again with others.
		dropped, err := h.dropUnknownInputs(tx)
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
func (h *Harness) pruneUnconfirmed() error {
	for op, c := range h.f.coins {
		if c.height != unconfirmed {
			continue
		}
		res, err := h.node.RPC().GetTxOut(&op.Hash, op.Index, true)
		if err != nil {
			return fmt.Errorf("testnet: gettxout %v: %w", op, err)
		}
		if res == nil {
			delete(h.f.coins, op)
		}
	}
	return nil
}

// maxPayAttempts bounds how often Pay re-selects coins after dropping
// ones the node does not know.
const maxPayAttempts = 5

// dropUnknownInputs forgets the funder coins tx spends that the node has
// neither in its UTXO set nor in its mempool, and returns how many.
func (h *Harness) dropUnknownInputs(tx *wire.MsgTx) (int, error) {
	dropped := 0
	for _, in := range tx.TxIn {
		op := in.PreviousOutPoint
		if _, ok := h.f.coins[op]; !ok {
			continue
		}
		res, err := h.node.RPC().GetTxOut(&op.Hash, op.Index, true)
		if err != nil {
			return dropped, fmt.Errorf("testnet: gettxout %v: %w", op, err)
		}
		if res == nil {
			delete(h.f.coins, op)
			dropped++
		}
	}
	return dropped, nil
}

// sendTx broadcasts tx through node.
func sendTx(node *Node, tx *wire.MsgTx) error {
	if err := node.alive(); err != nil {
		return err
	}
	if _, err := node.RPC().SendRawTransaction(tx, true); err != nil {
		return fmt.Errorf("testnet: sendrawtransaction %s: %w", tx.TxHash(), err)
	}
	return nil
}

// Broadcast sends a transaction (e.g. from NewTx or DoubleSpend) to the
// main node's mempool.
func (h *Harness) Broadcast(tx *wire.MsgTx) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := h.usable(); err != nil {
		return err
	}
	return sendTx(h.node, tx)
}

// PayAddress pays amt to addr.
func (h *Harness) PayAddress(addr btcutil.Address, amt btcutil.Amount) (*wire.MsgTx, error) {
	script, err := txscript.PayToAddrScript(addr)
	if err != nil {
		return nil, fmt.Errorf("testnet: script of %s: %w", addr, err)
	}
	return h.Pay([]*wire.TxOut{wire.NewTxOut(int64(amt), script)})
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
func (h *Harness) Noise(ntx int) ([]*wire.MsgTx, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	txs := make([]*wire.MsgTx, 0, ntx)
	for range ntx {
		tx, err := h.payLocked(noiseOutputs(h.rng))
		if err != nil {
			return txs, err
		}
		txs = append(txs, tx)
	}
	return txs, nil
}

// prevOutput returns the output op refers to, from the node's transaction
// index or mempool (spent or not).
func prevOutput(node *Node, op wire.OutPoint) (*wire.TxOut, error) {
	if err := node.alive(); err != nil {
		return nil, err
	}
	tx, err := node.RPC().GetRawTransaction(&op.Hash)
	if err != nil {
		return nil, fmt.Errorf("testnet: getrawtransaction %s: %w", op.Hash, err)
	}
	return outputOf(tx.MsgTx(), op)
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
func (h *Harness) BuildSpend(key *Keyring, outpoints []wire.OutPoint, to []*wire.TxOut) (*wire.MsgTx, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := h.usable(); err != nil {
		return nil, err
	}
	return buildSpend(h.prevOutput, key, outpoints, to)
}

// prevOutput returns the output op names, from btcd's transaction index.
func (h *Harness) prevOutput(op wire.OutPoint) (*wire.TxOut, error) { return prevOutput(h.node, op) }

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
// BuildSpend); it stays in the mempool until Mine.
func (h *Harness) Spend(key *Keyring, outpoints []wire.OutPoint, to []*wire.TxOut) (*wire.MsgTx, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := h.usable(); err != nil {
		return nil, err
	}
	tx, err := buildSpend(h.prevOutput, key, outpoints, to)
	if err != nil {
		return nil, err
	}
	if err := sendTx(h.node, tx); err != nil {
		return nil, err
	}
	h.f.applyTx(tx, unconfirmed, false)
	return tx, nil
}

// SpendFee returns the fee Spend needs (at FeeRate) for a transaction
// spending inputs of the given scripts to outputs.
func SpendFee(inScripts [][]byte, to []*wire.TxOut) btcutil.Amount {
	return btcutil.Amount(FeeRate * estimateVsize(inScripts, to))
}

// Close stops the reorg node and the main node; it is idempotent.
func (h *Harness) Close() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil
	}
	h.closed = true
	var errs []error
	for _, n := range h.extra {
		errs = append(errs, n.Stop())
	}
	if h.node2 != nil {
		errs = append(errs, h.node2.Stop())
	}
	errs = append(errs, h.node.Stop())
	if h.ownDir != "" {
		errs = append(errs, os.RemoveAll(h.ownDir))
	}
	return errors.Join(errs...)
}
