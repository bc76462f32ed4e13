package testnet

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"sort"
	"sync"

	"github.com/btcsuite/btcd/btcec/v2"
	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/txscript"
	"github.com/btcsuite/btcd/wire"
)

// Funding-wallet policy.
const (
	// FeeRate is the fee rate of the harness's transactions, in satoshis
	// per virtual byte (btcd's relay minimum is 1).
	FeeRate = 2
	// minChange is the smallest change output the funder keeps; less goes
	// to the fee.
	minChange = 1_000
	// unconfirmed marks a coin's height while it is in the mempool.
	unconfirmed = -1
)

// funderPriv returns the harness funding key: SHA-256 of "bloomwatch
// funder". It is made on first use, not at package init: its public key
// needs secp256k1's precomputed tables, which every command of the binary
// (it imports this package through demo) would otherwise decode at start.
var funderPriv = sync.OnceValue(func() *btcec.PrivateKey {
	s := sha256.Sum256([]byte("bloomwatch funder"))
	priv, _ := btcec.PrivKeyFromBytes(s[:])
	return priv
})

// funderAddress returns the funding key's P2WPKH address on params.
func funderAddress(params *chaincfg.Params) (btcutil.Address, error) {
	return addressFor(PurposeBIP84, funderPriv().PubKey(), params)
}

// coin is an output the funder can spend.
type coin struct {
	value    int64
	height   int32 // unconfirmed when in the mempool
	coinbase bool
}

// funder is the harness's in-memory wallet: one P2WPKH key, the coins
// paying it (from the blocks the harness saw and its own change), and the
// coins it already spent (so it can sign a double spend).
type funder struct {
	params   *chaincfg.Params
	script   []byte
	coins    map[wire.OutPoint]coin
	spent    map[wire.OutPoint]coin
	tip      int32
	maturity int32
}

func newFunder(params *chaincfg.Params) (*funder, error) {
	addr, err := funderAddress(params)
	if err != nil {
		return nil, err
	}
	script, err := txscript.PayToAddrScript(addr)
	if err != nil {
		return nil, fmt.Errorf("testnet: funder script: %w", err)
	}
	return &funder{
		params:   params,
		script:   script,
		coins:    make(map[wire.OutPoint]coin),
		spent:    make(map[wire.OutPoint]coin),
		maturity: int32(params.CoinbaseMaturity),
	}, nil
}

// applyBlock records a block at height: spends of the funder's coins and
// outputs paying it.
func (f *funder) applyBlock(b *wire.MsgBlock, height int32) {
	f.tip = max(f.tip, height)
	for i, tx := range b.Transactions {
		f.applyTx(tx, height, i == 0)
	}
}

// applyTx records one transaction, confirmed at height or unconfirmed.
func (f *funder) applyTx(tx *wire.MsgTx, height int32, coinbase bool) {
	if !coinbase {
		for _, in := range tx.TxIn {
			if c, ok := f.coins[in.PreviousOutPoint]; ok {
				f.spent[in.PreviousOutPoint] = c
				delete(f.coins, in.PreviousOutPoint)
			}
		}
	}
	txid := tx.TxHash()
	for i, out := range tx.TxOut {
		if bytes.Equal(out.PkScript, f.script) {
			f.coins[wire.OutPoint{Hash: txid, Index: uint32(i)}] = coin{value: out.Value, height: height, coinbase: coinbase}
		}
	}
}

// spendable reports whether c can be spent in the next block.
func (f *funder) spendable(c coin) bool {
	return !c.coinbase || f.tip+1-c.height >= f.maturity
}

// balance returns the value of the spendable coins.
func (f *funder) balance() int64 {
	var sum int64
	for _, c := range f.coins {
		if f.spendable(c) {
			sum += c.value
		}
	}
	return sum
}

// selectCoins picks spendable coins, largest first (ties by outpoint, so
// the choice is deterministic), until they cover target plus the fee of a
// transaction with outs and a change output.
func (f *funder) selectCoins(outs []*wire.TxOut) ([]prevOut, int64, error) {
	type cand struct {
		op wire.OutPoint
		c  coin
	}
	var target int64
	for _, o := range outs {
		target += o.Value
	}
	withChange := append(append([]*wire.TxOut(nil), outs...), wire.NewTxOut(0, f.script))
	// Fast path: the largest coin alone covers the payment.
	oneFee := FeeRate * estimateVsize([][]byte{f.script}, withChange)
	var (
		best  wire.OutPoint
		bestC coin
		found bool
	)
	for op, c := range f.coins {
		if !f.spendable(c) {
			continue
		}
		if !found || c.value > bestC.value || (c.value == bestC.value && outpointLess(op, best)) {
			best, bestC, found = op, c, true
		}
	}
	if found && bestC.value >= target+oneFee {
		return []prevOut{{op: best, value: bestC.value, script: f.script, key: funderPriv()}}, oneFee, nil
	}
	var (
		ins     []prevOut
		scripts [][]byte
		sum     int64
	)
	var cands []cand
	for op, c := range f.coins {
		if f.spendable(c) {
			cands = append(cands, cand{op, c})
		}
	}
	sort.Slice(cands, func(i, j int) bool {
		if cands[i].c.value != cands[j].c.value {
			return cands[i].c.value > cands[j].c.value
		}
		return outpointLess(cands[i].op, cands[j].op)
	})
	for _, c := range cands {
		ins = append(ins, prevOut{op: c.op, value: c.c.value, script: f.script, key: funderPriv()})
		scripts = append(scripts, f.script)
		sum += c.c.value
		fee := FeeRate * estimateVsize(scripts, withChange)
		if sum >= target+fee {
			return ins, fee, nil
		}
	}
	return nil, 0, fmt.Errorf("%w: need %d sat, have %d spendable", ErrInsufficientFunds, target, sum)
}

// outpointLess orders outpoints by hash bytes, then index.
func outpointLess(a, b wire.OutPoint) bool {
	if c := bytes.Compare(a.Hash[:], b.Hash[:]); c != 0 {
		return c < 0
	}
	return a.Index < b.Index
}

// build funds, signs and records (as unconfirmed) a transaction paying
// outs, with change back to the funder. It does not broadcast.
func (f *funder) build(outs []*wire.TxOut) (*wire.MsgTx, error) {
	ins, fee, err := f.selectCoins(outs)
	if err != nil {
		return nil, err
	}
	tx, err := f.assemble(ins, fee, outs)
	if err != nil {
		return nil, err
	}
	f.applyTx(tx, unconfirmed, false)
	return tx, nil
}

// assemble builds and signs a transaction spending ins to outs plus
// change (when at least minChange) after fee.
func (f *funder) assemble(ins []prevOut, fee int64, outs []*wire.TxOut) (*wire.MsgTx, error) {
	tx := wire.NewMsgTx(wire.TxVersion)
	var sum, paid int64
	for _, in := range ins {
		tx.AddTxIn(wire.NewTxIn(&in.op, nil, nil))
		sum += in.value
	}
	for _, o := range outs {
		tx.AddTxOut(o)
		paid += o.Value
	}
	change := sum - paid - fee
	if change < 0 {
		return nil, fmt.Errorf("%w: inputs %d < outputs %d + fee %d", ErrInsufficientFunds, sum, paid, fee)
	}
	if change >= minChange {
		tx.AddTxOut(wire.NewTxOut(change, f.script))
	}
	if err := signTx(tx, ins); err != nil {
		return nil, err
	}
	return tx, nil
}

// conflict builds a transaction that spends the same funder inputs as tx
// (a double spend) and pays outs, with change back to the funder. It
// records nothing: whichever of the two is mined, the blocks tell.
func (f *funder) conflict(tx *wire.MsgTx, outs []*wire.TxOut) (*wire.MsgTx, error) {
	var (
		ins     []prevOut
		scripts [][]byte
	)
	for _, in := range tx.TxIn {
		c, ok := f.spent[in.PreviousOutPoint]
		if !ok {
			c, ok = f.coins[in.PreviousOutPoint]
		}
		if !ok {
			return nil, fmt.Errorf("%w: input %v is not a funder coin", ErrBadSpec, in.PreviousOutPoint)
		}
		ins = append(ins, prevOut{op: in.PreviousOutPoint, value: c.value, script: f.script, key: funderPriv()})
		scripts = append(scripts, f.script)
	}
	withChange := append(append([]*wire.TxOut(nil), outs...), wire.NewTxOut(0, f.script))
	return f.assemble(ins, FeeRate*estimateVsize(scripts, withChange), outs)
}

// unapply reverses applyTx of an unconfirmed transaction that was not
// accepted: its inputs are coins again and its outputs are forgotten.
func (f *funder) unapply(tx *wire.MsgTx) {
	txid := tx.TxHash()
	for i := range tx.TxOut {
		delete(f.coins, wire.OutPoint{Hash: txid, Index: uint32(i)})
	}
	for _, in := range tx.TxIn {
		if c, ok := f.spent[in.PreviousOutPoint]; ok {
			f.coins[in.PreviousOutPoint] = c
			delete(f.spent, in.PreviousOutPoint)
		}
	}
}
