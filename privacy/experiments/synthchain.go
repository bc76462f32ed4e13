package experiments

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/bloomwatch/bloomwatch/privacy/element"
	"github.com/bloomwatch/bloomwatch/privacy/internal/synth"
	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
)

// A synthetic chain: blocks of P2PKH transactions among background users
// and one wallet, with real hash160s of key-like 33-byte strings, so every
// attack (both-forms, graph, saturation) runs on it exactly as on a real
// chain. Signatures are placeholders: nothing here validates scripts.

// Synthetic chain shape limits and placeholders.
const (
	// coinbaseValue is the placeholder subsidy, in satoshis.
	coinbaseValue = 50 * btcutil.SatoshiPerBitcoin
	// maxCoSpend is the most outputs a synthetic transaction spends.
	maxCoSpend = 2
	// walletKeyStream and backgroundKeyStream separate the key streams of
	// the wallet and the background users.
	walletKeyStream     = 1
	backgroundKeyStream = 2
)

// ChainConfig shapes a synthetic chain.
type ChainConfig struct {
	Seed uint64
	// Blocks is the number of blocks, coinbase-only genesis included.
	Blocks int
	// TxsPerBlock is the number of background transactions per block.
	TxsPerBlock int
	// Users is the number of background users.
	Users int
	// WalletKeys is the number of keys the wallet derives.
	WalletKeys int
	// WalletReceiveEvery makes the wallet receive one payment, to its next
	// unused key, every this many blocks (0: never).
	WalletReceiveEvery int
	// WalletSpendEvery makes the wallet spend two of its outputs at once,
	// paying a background user with change to its next unused key, every
	// this many blocks (0: never).
	WalletSpendEvery int
	// CoinbaseToWallet pays every coinbase to the wallet's first key (the
	// simnet harness funds watched addresses this way).
	CoinbaseToWallet bool
}

// Key is a synthetic key: a 33-byte public-key-like string and its real
// hash160.
type Key struct {
	PubKey  []byte
	Hash160 []byte
}

// Candidate returns the key as a candidate [hash160, pubkey].
func (k Key) Candidate() element.Candidate {
	return element.Candidate{Forms: [][]byte{k.Hash160, k.PubKey}}
}

// SynthChain is a generated chain with its ground truth.
type SynthChain struct {
	Chain element.MemChain
	// Wallet holds the wallet's keys in derivation order; UsedKeys of
	// them appear on chain.
	Wallet   []Key
	UsedKeys int
	// FirstUse[i] is the height at which wallet key i was first paid.
	FirstUse []int32
	// Counterparties lists the background users who paid the wallet or
	// were paid by it, in order of first contact.
	Counterparties []int
	// UserKeys[u] lists user u's keys in order of use.
	UserKeys [][]Key
	// WalletTxs counts the transactions touching the wallet.
	WalletTxs int
}

// synthOutput is an unspent output and its owner's key.
type synthOutput struct {
	op    wire.OutPoint
	key   Key
	value int64
}

// chainBuilder holds the generator's state.
type chainBuilder struct {
	cfg      ChainConfig
	rng      *rand.Rand
	out      *SynthChain
	userUTXO [][]synthOutput
	wallet   []synthOutput
	nextKey  uint64
	contact  map[int]bool
	height   int32
}

// NewSynthChain generates a chain. It is a pure function of cfg.
func NewSynthChain(cfg ChainConfig) (*SynthChain, error) {
	if cfg.Blocks < 1 || cfg.Users < 2 || cfg.TxsPerBlock < 0 || cfg.WalletKeys < 1 {
		return nil, fmt.Errorf("%w: synthetic chain needs at least 1 block, 2 users and 1 wallet key", ErrBadConfig)
	}
	b := &chainBuilder{
		cfg:      cfg,
		rng:      rand.New(rand.NewPCG(cfg.Seed, backgroundKeyStream)),
		out:      &SynthChain{UserKeys: make([][]Key, cfg.Users)},
		userUTXO: make([][]synthOutput, cfg.Users),
		contact:  map[int]bool{},
	}
	for i := range cfg.WalletKeys {
		b.out.Wallet = append(b.out.Wallet, synthKey(cfg.Seed, walletKeyStream, uint64(i)))
	}
	prev := chainhash.Hash{}
	for h := range cfg.Blocks {
		blk := b.block(h, prev)
		prev = blk.BlockHash()
		b.out.Chain = append(b.out.Chain, blk)
	}
	return b.out, nil
}

// synthKey derives key i of a stream from the seed.
func synthKey(seed, stream, i uint64) Key {
	pk, h := synth.Key(seed, stream, i)
	return Key{PubKey: pk, Hash160: h}
}

// userKey returns a fresh key for user u.
func (b *chainBuilder) userKey(u int) Key {
	k := synthKey(b.cfg.Seed, backgroundKeyStream, b.nextKey)
	b.nextKey++
	b.out.UserKeys[u] = append(b.out.UserKeys[u], k)
	return k
}

// walletKey returns the wallet's next unused key (the last one again once
// all are used).
func (b *chainBuilder) walletKey() Key {
	i := min(b.out.UsedKeys, len(b.out.Wallet)-1)
	if i == b.out.UsedKeys {
		b.out.UsedKeys++
		b.out.FirstUse = append(b.out.FirstUse, b.height)
	}
	return b.out.Wallet[i]
}

// block builds block h on prev.
func (b *chainBuilder) block(h int, prev chainhash.Hash) *wire.MsgBlock {
	b.height = int32(h)
	blk := wire.NewMsgBlock(wire.NewBlockHeader(1, &prev, &chainhash.Hash{}, 0, uint32(h)))
	// wire.NewBlockHeader stamps the wall clock: a synthetic chain's
	// headers (its block hashes, BIP158's filter keys) must not depend on
	// when it was built.
	blk.Header.Timestamp = simEpoch.Add(time.Duration(h) * blockInterval)
	miner := b.rng.IntN(b.cfg.Users)
	var cbKey Key
	toWallet := b.cfg.CoinbaseToWallet
	if toWallet {
		cbKey = b.out.Wallet[0]
		if b.out.UsedKeys == 0 {
			b.walletKey()
		}
	} else {
		cbKey = b.userKey(miner)
	}
	cb := wire.NewMsgTx(wire.TxVersion)
	cb.AddTxIn(&wire.TxIn{
		PreviousOutPoint: wire.OutPoint{Index: wire.MaxPrevOutIndex},
		SignatureScript:  synth.HeightScript(h),
	})
	cb.AddTxOut(wire.NewTxOut(coinbaseValue, synth.P2PKH(cbKey.Hash160)))
	if h == 0 {
		b.premine(cb)
	}
	blk.AddTransaction(cb)
	if h == 0 {
		b.fixGenesisOutPoints(cb)
	}
	if toWallet {
		b.out.WalletTxs++
	} else {
		b.userUTXO[miner] = append(b.userUTXO[miner], synthOutput{op: outPoint(cb, 0), key: cbKey, value: coinbaseValue})
	}
	for range b.cfg.TxsPerBlock {
		b.backgroundTx(blk)
	}
	if every := b.cfg.WalletReceiveEvery; every > 0 && h > 0 && h%every == 0 {
		b.walletReceive(blk)
	}
	if every := b.cfg.WalletSpendEvery; every > 0 && h > 0 && h%every == 0 {
		b.walletSpend(blk)
	}
	return blk
}

// outPoint returns output i of tx.
func outPoint(tx *wire.MsgTx, i uint32) wire.OutPoint {
	return wire.OutPoint{Hash: tx.TxHash(), Index: i}
}

// premine adds one output per background user to the genesis coinbase,
// so every user can pay from the first block on.
func (b *chainBuilder) premine(cb *wire.MsgTx) {
	for u := range b.cfg.Users {
		k := b.userKey(u)
		b.userUTXO[u] = append(b.userUTXO[u], synthOutput{
			op: wire.OutPoint{Index: uint32(len(cb.TxOut))}, key: k, value: coinbaseValue,
		})
		cb.AddTxOut(wire.NewTxOut(coinbaseValue, synth.P2PKH(k.Hash160)))
	}
}

// fixGenesisOutPoints sets the txid of the premined outputs once the
// genesis coinbase is complete.
func (b *chainBuilder) fixGenesisOutPoints(cb *wire.MsgTx) {
	txid := cb.TxHash()
	for u := range b.userUTXO {
		for i := range b.userUTXO[u] {
			if b.userUTXO[u][i].op.Hash == (chainhash.Hash{}) {
				b.userUTXO[u][i].op.Hash = txid
			}
		}
	}
}

// takeUTXOs removes up to n random outputs of user u.
func (b *chainBuilder) takeUTXOs(u, n int) []synthOutput {
	pool := b.userUTXO[u]
	var out []synthOutput
	for range min(n, len(pool)) {
		i := b.rng.IntN(len(pool))
		out = append(out, pool[i])
		pool[i] = pool[len(pool)-1]
		pool = pool[:len(pool)-1]
	}
	b.userUTXO[u] = pool
	return out
}

// richUser returns a random user with an unspent output, or -1.
func (b *chainBuilder) richUser() int {
	start := b.rng.IntN(b.cfg.Users)
	for j := range b.cfg.Users {
		u := (start + j) % b.cfg.Users
		if len(b.userUTXO[u]) > 0 {
			return u
		}
	}
	return -1
}

// spendTx returns a transaction spending ins.
func spendTx(ins []synthOutput) (*wire.MsgTx, int64) {
	tx := wire.NewMsgTx(wire.TxVersion)
	var total int64
	for _, in := range ins {
		tx.AddTxIn(wire.NewTxIn(&in.op, synth.SpendScript(in.key.PubKey), nil))
		total += in.value
	}
	return tx, total
}

// backgroundTx adds a payment from one user to another, with change.
func (b *chainBuilder) backgroundTx(blk *wire.MsgBlock) {
	from := b.richUser()
	if from < 0 {
		return
	}
	to := b.rng.IntN(b.cfg.Users)
	ins := b.takeUTXOs(from, 1+b.rng.IntN(maxCoSpend))
	tx, total := spendTx(ins)
	pay := total / 2
	payKey, changeKey := b.userKey(to), b.userKey(from)
	tx.AddTxOut(wire.NewTxOut(pay, synth.P2PKH(payKey.Hash160)))
	tx.AddTxOut(wire.NewTxOut(total-pay, synth.P2PKH(changeKey.Hash160)))
	blk.AddTransaction(tx)
	b.userUTXO[to] = append(b.userUTXO[to], synthOutput{op: outPoint(tx, 0), key: payKey, value: pay})
	b.userUTXO[from] = append(b.userUTXO[from], synthOutput{op: outPoint(tx, 1), key: changeKey, value: total - pay})
}

// walletReceive adds a payment from a background user to the wallet's next
// key.
func (b *chainBuilder) walletReceive(blk *wire.MsgBlock) {
	from := b.richUser()
	if from < 0 {
		return
	}
	ins := b.takeUTXOs(from, 1)
	tx, total := spendTx(ins)
	pay := total / 2
	key, changeKey := b.walletKey(), b.userKey(from)
	tx.AddTxOut(wire.NewTxOut(pay, synth.P2PKH(key.Hash160)))
	tx.AddTxOut(wire.NewTxOut(total-pay, synth.P2PKH(changeKey.Hash160)))
	blk.AddTransaction(tx)
	b.wallet = append(b.wallet, synthOutput{op: outPoint(tx, 0), key: key, value: pay})
	b.userUTXO[from] = append(b.userUTXO[from], synthOutput{op: outPoint(tx, 1), key: changeKey, value: total - pay})
	b.meet(from)
	b.out.WalletTxs++
}

// walletSpend co-spends two wallet outputs to a background user, with
// change to the wallet's next key.
func (b *chainBuilder) walletSpend(blk *wire.MsgBlock) {
	if len(b.wallet) < maxCoSpend {
		return
	}
	ins := b.wallet[:maxCoSpend]
	b.wallet = b.wallet[maxCoSpend:]
	tx, total := spendTx(ins)
	to := b.rng.IntN(b.cfg.Users)
	pay := total / 2
	payKey, change := b.userKey(to), b.walletKey()
	tx.AddTxOut(wire.NewTxOut(pay, synth.P2PKH(payKey.Hash160)))
	tx.AddTxOut(wire.NewTxOut(total-pay, synth.P2PKH(change.Hash160)))
	blk.AddTransaction(tx)
	b.userUTXO[to] = append(b.userUTXO[to], synthOutput{op: outPoint(tx, 0), key: payKey, value: pay})
	b.wallet = append(b.wallet, synthOutput{op: outPoint(tx, 1), key: change, value: total - pay})
	b.meet(to)
	b.out.WalletTxs++
}

// meet records a counterparty.
func (b *chainBuilder) meet(u int) {
	if !b.contact[u] {
		b.contact[u] = true
		b.out.Counterparties = append(b.out.Counterparties, u)
	}
}

// WalletCandidates returns the wallet's first n keys as candidates
// [hash160, pubkey] (the truth for an analysis).
func (s *SynthChain) WalletCandidates(n int) []element.Candidate {
	out := make([]element.Candidate, 0, n)
	for _, k := range s.Wallet[:min(n, len(s.Wallet))] {
		out = append(out, k.Candidate())
	}
	return out
}

// NearDecoys returns up to n keys of the wallet's counterparties, users
// whose own keys are linked to one another by their spending: decoys
// that survive the graph attack because they sit next to the wallet in
// the transaction graph. Keys are taken user by user, in order of first
// contact.
func (s *SynthChain) NearDecoys(n int) []Key {
	var out []Key
	for _, u := range s.Counterparties {
		for _, k := range s.UserKeys[u] {
			if len(out) == n {
				return out
			}
			out = append(out, k)
		}
	}
	return out
}
