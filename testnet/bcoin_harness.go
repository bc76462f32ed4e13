package testnet

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"os"
	"sync"
	"testing"

	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/txscript"
	"github.com/btcsuite/btcd/wire"
)

// BcoinOptions configures a BcoinHarness.
type BcoinOptions struct {
	// Log receives bcoin's output as BcoinConfig.Log describes.
	Log io.Writer
	// LogLevel is bcoin's log level (BcoinConfig.LogLevel).
	LogLevel string
	// Bare skips mining the setup blocks. The zero options mine until
	// segwit is active on bcoin's regtest (SegwitHeight: 432 blocks,
	// bcoin's BIP9 windows of 144 like btcd's) and the first coinbases
	// are spendable, so Pay, Noise and Spend work at once.
	Bare bool
}

// BcoinHarness is a bcoin node plus the same in-memory funding wallet as
// Harness (its coinbases pay the funder's P2WPKH key): payments by output
// script, noise, spends of a Keyring's outputs, scenario chains
// (BuildChain), bcoin's view of a wallet (ScanTruth) and reorganisations
// (Reorg). Methods are safe for concurrent use but serialize on one
// mutex.
type BcoinHarness struct {
	mu     sync.Mutex
	opts   BcoinOptions
	node   *BcoinNode
	f      *funder
	script []byte // the funder's output script (coinbases pay it)
	rng    *rand.Rand
	closed bool
}

// NewBcoin starts a bcoin node (StartBcoin) and, unless opts.Bare, mines
// until segwit is active and coinbases are spendable.
func NewBcoin(ctx context.Context, opts BcoinOptions) (*BcoinHarness, error) {
	node, err := StartBcoin(ctx, BcoinConfig{Log: opts.Log, LogLevel: opts.LogLevel})
	if err != nil {
		return nil, err
	}
	h := &BcoinHarness{opts: opts, node: node, rng: rand.New(rand.NewSource(1))}
	if h.f, err = newFunder(node.Params()); err != nil {
		return nil, errors.Join(err, node.Stop())
	}
	h.script = h.f.script
	if err := h.setup(ctx); err != nil {
		return nil, errors.Join(err, h.Close())
	}
	return h, nil
}

// setup mines the segwit and maturity blocks and gives the funder the
// coinbases of the first setupCoinbases of them.
func (h *BcoinHarness) setup(ctx context.Context) error {
	want := max(int32(h.node.Params().CoinbaseMaturity)+MatureExtra, SegwitHeight(h.node.Params()))
	if h.opts.Bare {
		return nil
	}
	hashes, err := h.node.Generate(ctx, int(want), h.script)
	if err != nil {
		return err
	}
	for i, hash := range hashes[:min(len(hashes), setupCoinbases)] {
		b, err := h.node.Block(hash)
		if err != nil {
			return err
		}
		h.f.applyBlock(b, int32(i)+1)
	}
	h.f.tip = want
	return nil
}

// NewBcoinT is NewBcoin for tests: it closes the harness in t.Cleanup and
// logs bcoin's output when the test fails. When Node.js or bcoin cannot
// be had (ErrNoNodeJS, ErrBcoinInstall) it skips the test with the reason,
// unless the CI environment variable is set: in CI bcoin must be there
// (.ci/run installs it), so it fails instead.
func NewBcoinT(t testing.TB, opts BcoinOptions) *BcoinHarness {
	t.Helper()
	RequireBcoin(t)
	var buf *tailBuffer
	if opts.Log == nil {
		buf = &tailBuffer{}
		opts.Log = buf
	}
	h, err := NewBcoin(t.Context(), opts)
	if err != nil {
		t.Fatalf("testnet.NewBcoin: %v", err)
	}
	t.Cleanup(func() {
		if err := h.Close(); err != nil {
			t.Errorf("testnet: close bcoin harness: %v", err)
		}
		if buf != nil && t.Failed() {
			t.Logf("bcoin output (tail):\n%s", buf.String())
		}
	})
	return h
}

// RequireBcoin makes sure bcoin can be started (BcoinPackage): outside CI
// (CI unset) it skips t with the reason when Node.js or the bcoin install
// is missing; in CI it fails t.
func RequireBcoin(t testing.TB) {
	t.Helper()
	_, err := BcoinPackage(t.Context())
	if err == nil {
		return
	}
	if os.Getenv("CI") == "" && (errors.Is(err, ErrNoNodeJS) || errors.Is(err, ErrBcoinInstall)) {
		t.Skipf("bcoin unavailable (CI would fail here): %v", err)
	}
	t.Fatalf("bcoin unavailable: %v", err)
}

// Node returns the harness's bcoin node.
func (h *BcoinHarness) Node() *BcoinNode { return h.node }

// Params returns the chain parameters (regtest: the keyring, wallet and
// SPV client use them unchanged).
func (h *BcoinHarness) Params() *chaincfg.Params { return h.node.Params() }

// FunderBalance returns the funding wallet's spendable satoshis.
func (h *BcoinHarness) FunderBalance() btcutil.Amount {
	h.mu.Lock()
	defer h.mu.Unlock()
	return btcutil.Amount(h.f.balance())
}

// usable returns ErrStopped after Close.
func (h *BcoinHarness) usable() error {
	if h.closed {
		return ErrStopped
	}
	return nil
}

// Mine mines n blocks (with the mempool's transactions), coinbases to the
// funder, and records their funder coins.
func (h *BcoinHarness) Mine(n int) ([]*chainhash.Hash, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.mineLocked(context.Background(), n)
}

func (h *BcoinHarness) mineLocked(ctx context.Context, n int) ([]*chainhash.Hash, error) {
	hashes, _, err := h.mineBlocksLocked(ctx, n)
	return hashes, err
}

// mineBlocksLocked mines n blocks, applies them to the funder and returns
// their hashes and the blocks.
func (h *BcoinHarness) mineBlocksLocked(ctx context.Context, n int) ([]*chainhash.Hash, []*wire.MsgBlock, error) {
	if err := h.usable(); err != nil {
		return nil, nil, err
	}
	if n <= 0 {
		return nil, nil, nil
	}
	hashes, err := h.node.Generate(ctx, n, h.script)
	if err != nil {
		return nil, nil, err
	}
	_, tip, err := h.node.BestBlock()
	if err != nil {
		return nil, nil, err
	}
	base := tip - int32(len(hashes)) + 1
	blocks := make([]*wire.MsgBlock, len(hashes))
	for i, hash := range hashes {
		b, err := h.node.Block(hash)
		if err != nil {
			return nil, nil, err
		}
		h.f.applyBlock(b, base+int32(i))
		blocks[i] = b
	}
	return hashes, blocks, nil
}

// Pay funds, signs and broadcasts a transaction paying outputs (with
// change to the funder); it stays in the mempool until Mine.
func (h *BcoinHarness) Pay(outputs []*wire.TxOut) (*wire.MsgTx, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.payLocked(outputs)
}

func (h *BcoinHarness) payLocked(outputs []*wire.TxOut) (*wire.MsgTx, error) {
	if err := h.usable(); err != nil {
		return nil, err
	}
	tx, err := h.f.build(outputs)
	if err != nil {
		return nil, err
	}
	if err := h.node.SendTx(tx); err != nil {
		h.f.unapply(tx)
		return nil, err
	}
	return tx, nil
}

// PayScript pays amt to an output script.
func (h *BcoinHarness) PayScript(pkScript []byte, amt btcutil.Amount) (*wire.MsgTx, error) {
	return h.Pay([]*wire.TxOut{wire.NewTxOut(int64(amt), pkScript)})
}

// PayAddress pays amt to a regtest address (Core's and btcd's format, as
// the Keyring makes them): it pays the address's script, which bcoin
// takes whatever prefix it gives the address.
func (h *BcoinHarness) PayAddress(addr btcutil.Address, amt btcutil.Amount) (*wire.MsgTx, error) {
	script, err := txscript.PayToAddrScript(addr)
	if err != nil {
		return nil, fmt.Errorf("testnet: script of %s: %w", addr, err)
	}
	return h.PayScript(script, amt)
}

// Noise broadcasts ntx payments from the funder to fresh random scripts of
// mixed types (NoiseKinds), some with several outputs. They stay in the
// mempool until Mine.
func (h *BcoinHarness) Noise(ntx int) ([]*wire.MsgTx, error) {
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

// Spend signs and broadcasts a spend of the keyring's outputs (P2PKH,
// P2WPKH or P2SH-P2WPKH) to the outputs to; what they leave is the fee
// (ErrFeeTooLow below 1 sat/vbyte). The spent outputs are looked up in
// bcoin's transaction index.
func (h *BcoinHarness) Spend(key *Keyring, outpoints []wire.OutPoint, to []*wire.TxOut) (*wire.MsgTx, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := h.usable(); err != nil {
		return nil, err
	}
	tx, err := buildSpend(func(op wire.OutPoint) (*wire.TxOut, error) {
		prev, err := h.node.Tx(&op.Hash)
		if err != nil {
			return nil, err
		}
		return outputOf(prev, op)
	}, key, outpoints, to)
	if err != nil {
		return nil, err
	}
	if err := h.node.SendTx(tx); err != nil {
		return nil, err
	}
	h.f.applyTx(tx, unconfirmed, false)
	return tx, nil
}

// Close stops the node; it is idempotent.
func (h *BcoinHarness) Close() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil
	}
	h.closed = true
	return h.node.Stop()
}
