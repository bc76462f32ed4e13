package experiments

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/bloomwatch/bloomwatch/privacy/element"
	"github.com/bloomwatch/bloomwatch/privacy/internal/synth"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
)

// A population of wallets on one synthetic chain: many
// wallets of three kinds, each paid by background users and by one
// another, spending several coins at once with change to a fresh key,
// sometimes joining another party's input (a CoinJoin-like transaction
// that misleads the multi-input heuristic), and each running its light
// client in sessions separated by time offline. NewPopulation builds the
// chain and the ground truth; Population.Simulate plays every session's
// client (population_client.go) and returns one transcript per session,
// as a crawler that collects filters from many clients would record them.

// WalletKind is a light client's filter policy.
type WalletKind int

// The wallet kinds of a population.
const (
	// KindBitcoinj inserts each key's public key and hash160, sizes the
	// filter for the elements plus 100 at 0.0005, draws a fresh tweak at
	// every start, and reloads when the observed false-positive rate
	// passes 10 times the target (MAX_FP_RATE_INCREASE of bitcoinj 0.13,
	// which also lowered the target to 0.00001; the 0.12.x Nick's modern
	// wallets ran reloaded at 2 times 0.0005: docs/RESEARCH.md, Sources).
	KindBitcoinj WalletKind = iota + 1
	// KindBreadwallet inserts each address's hash160 and every unspent
	// outpoint, sized like bitcoinj's, a fresh tweak for every filter,
	// BLOOM_UPDATE_ALL, the same 10x reset.
	KindBreadwallet
	// KindBloomwatch is bloomwatch's policy (filterpolicy/filterpolicy.go): hash160s and
	// unspent outpoints, BLOOM_UPDATE_ALL, nested capacity steps at
	// 1e-4, one tweak persisted for the wallet's life, a reload when the
	// server's copy passes 10 times its rate, and a re-fetch of the
	// blocks from the one that made it derive new keys.
	KindBloomwatch
)

// Lookahead of each kind: the unused keys its wallet watches beyond the
// last used one.
const (
	// bitcoinjLookahead makes a fresh bitcoinj-like wallet watch 271
	// keys, the fresh bitcoinj wallet of Nick 2015.
	bitcoinjLookahead = 271
	// breadwalletLookahead is breadwallet's gap limits, 10 receive and 5
	// change (BRWallet.h, SEQUENCE_GAP_LIMIT_*).
	breadwalletLookahead = 15
	// bloomwatchLookahead is bloomwatch's gap limits, 20 receive and 10
	// change (wallet.DefaultGapExternal, DefaultGapInternal).
	bloomwatchLookahead = 30
)

// KindLookahead returns the kind's lookahead.
func KindLookahead(k WalletKind) int {
	switch k {
	case KindBitcoinj:
		return bitcoinjLookahead
	case KindBreadwallet:
		return breadwalletLookahead
	}
	return bloomwatchLookahead
}

// Kinds lists the wallet kinds in order.
var Kinds = []WalletKind{KindBitcoinj, KindBreadwallet, KindBloomwatch}

// String names the kind.
func (k WalletKind) String() string {
	switch k {
	case KindBitcoinj:
		return "bitcoinj-like"
	case KindBreadwallet:
		return "breadwallet-like"
	case KindBloomwatch:
		return "bloomwatch"
	}
	return fmt.Sprintf("kind(%d)", int(k))
}

// PopulationConfig shapes a population. A zero field takes the default
// in DefaultPopulationConfig.
type PopulationConfig struct {
	Seed uint64
	// WalletsPerKind is the number of wallets of each kind.
	WalletsPerKind int
	// Blocks is the chain length, genesis included.
	Blocks int
	// TxsPerBlock is the number of background transactions per block.
	TxsPerBlock int
	// Users is the number of background users.
	Users int
	// ReceiveEvery is a wallet's mean number of blocks between payments
	// it receives; SpendEvery between its spends.
	ReceiveEvery, SpendEvery int
	// WalletPayShare is the share of a wallet's spends that pay another
	// wallet of the population (the rest pay background users).
	WalletPayShare float64
	// JoinShare is the share of wallet spends that also spend an input
	// of a background user (a CoinJoin-like transaction);
	// BackgroundJoinShare the same for background payments.
	JoinShare, BackgroundJoinShare float64
	// Lookahead, when set, is the number of unused keys every wallet
	// watches beyond its last used one; 0 takes each kind's own
	// (KindLookahead).
	Lookahead int
	// SessionBlocks and OfflineBlocks are the mean lengths of a client's
	// sessions and of its time offline between them, in blocks.
	SessionBlocks, OfflineBlocks int
	// FPRateScale multiplies every kind's target rate (1: the kinds'
	// own defaults), for sweeps that need measurable linking errors.
	FPRateScale float64
	// Kinds are the kinds wallets take in turn (nil: Kinds, all three).
	Kinds []WalletKind
}

// DefaultPopulationConfig is the population `privacy experiment
// population` runs: 300 wallets on a 360-block chain, in about a minute
// on two cores.
var DefaultPopulationConfig = PopulationConfig{
	WalletsPerKind: 100, Blocks: 360, TxsPerBlock: 40, Users: 4000,
	ReceiveEvery: 25, SpendEvery: 60, WalletPayShare: 0.15,
	JoinShare: 0.05, BackgroundJoinShare: 0.02,
	SessionBlocks: 60, OfflineBlocks: 40, FPRateScale: 1,
}

// withDefaults fills zero fields and checks the ranges.
func (c PopulationConfig) withDefaults() (PopulationConfig, error) {
	d := DefaultPopulationConfig
	c.WalletsPerKind = orDefault(c.WalletsPerKind, d.WalletsPerKind)
	c.Blocks = orDefault(c.Blocks, d.Blocks)
	c.TxsPerBlock = orDefault(c.TxsPerBlock, d.TxsPerBlock)
	c.Users = orDefault(c.Users, d.Users)
	c.ReceiveEvery = orDefault(c.ReceiveEvery, d.ReceiveEvery)
	c.SpendEvery = orDefault(c.SpendEvery, d.SpendEvery)
	c.WalletPayShare = orDefault(c.WalletPayShare, d.WalletPayShare)
	c.JoinShare = orDefault(c.JoinShare, d.JoinShare)
	c.BackgroundJoinShare = orDefault(c.BackgroundJoinShare, d.BackgroundJoinShare)
	c.SessionBlocks = orDefault(c.SessionBlocks, d.SessionBlocks)
	c.OfflineBlocks = orDefault(c.OfflineBlocks, d.OfflineBlocks)
	c.FPRateScale = orDefault(c.FPRateScale, d.FPRateScale)
	switch {
	case c.WalletsPerKind < 1 || c.Blocks < minPopulationBlocks || c.TxsPerBlock < 0 || c.Users < 2:
		return c, fmt.Errorf("%w: population needs a wallet per kind, %d blocks and 2 users", ErrBadConfig, minPopulationBlocks)
	case c.ReceiveEvery < 1 || c.SpendEvery < 1 || c.Lookahead < 0 || c.Lookahead == 1 || c.SessionBlocks < 1 || c.OfflineBlocks < 1:
		return c, fmt.Errorf("%w: population intervals must be positive and a lookahead at least 2", ErrBadConfig)
	case !unitRange(c.WalletPayShare) || !unitRange(c.JoinShare) || !unitRange(c.BackgroundJoinShare):
		return c, fmt.Errorf("%w: population shares must be in [0, 1]", ErrBadConfig)
	case !validKinds(c.Kinds):
		return c, fmt.Errorf("%w: unknown wallet kind in %v", ErrBadConfig, c.Kinds)
	case !(c.FPRateScale > 0) || c.FPRateScale*BitcoinjFPRate >= 1:
		return c, fmt.Errorf("%w: rate scale %v", ErrBadConfig, c.FPRateScale)
	}
	return c, nil
}

// validKinds reports whether every kind is known.
func validKinds(ks []WalletKind) bool {
	for _, k := range ks {
		if k < KindBitcoinj || k > KindBloomwatch {
			return false
		}
	}
	return true
}

// unitRange reports whether v is in [0, 1].
func unitRange(v float64) bool { return v >= 0 && v <= 1 }

// Population shape constants.
const (
	// minPopulationBlocks is the shortest population chain.
	minPopulationBlocks = 20
	// birthdayShare bounds the wallets' birthdays to the first part of
	// the chain.
	birthdayShare = 3
	// firstStartMax is the most blocks between a wallet's birthday and
	// its client's first start.
	firstStartMax = 30
	// maxWalletInputs is the most coins a wallet spends at once.
	maxWalletInputs = 3
	// populationKeyStream separates the population's key streams from
	// the other experiments'.
	populationKeyStream = 1000
	// populationUserStream is the background users' key stream.
	populationUserStream = 999
	// walletStreamStride keeps each wallet's keys in a stream of its own.
	walletStreamStride = 1
	// hash160Size is the length of a key hash.
	hash160Size = 20
)

// KeyInfo is one key (address) of the population's chain and who owns it.
type KeyInfo struct {
	Key
	// Owner is the wallet index (>= 0), or -1-u for background user u.
	Owner int32
	// FirstSeen is the height of its first payment.
	FirstSeen int32
	// Revealed reports that a spend revealed its public key.
	Revealed bool
}

// PopWallet is one wallet of a population and its ground truth.
type PopWallet struct {
	ID   int
	Kind WalletKind
	// Keys are the wallet's keys in derivation order; the first Used
	// appear on chain, FirstUse[i] the height of key i's first payment.
	Keys     []Key
	Used     int
	FirstUse []int32
	// KeyIDs[i] is the index of Keys[i] in Population.Keys (-1 unused).
	KeyIDs []int32
	// Birthday is the height the wallet was created at: no payment
	// before it.
	Birthday int32
	// Sessions are the [start, end] heights of its client's sessions.
	Sessions [][2]int32
	// Txs counts the transactions touching it.
	Txs int
}

// Population is a chain with its wallets, users and keys.
type Population struct {
	Config  PopulationConfig
	Chain   element.MemChain
	Wallets []*PopWallet
	// Keys lists every key paid on chain, in order of first payment;
	// KeyIndex maps a hash160 to its index.
	Keys     []KeyInfo
	KeyIndex map[[20]byte]int32
	// CoSpends lists, per transaction with inputs from two or more keys,
	// the keys it spends from (the multi-input heuristic's evidence).
	CoSpends [][]int32
	// index and txRefs cache what the clients and decoy sources read of
	// the chain. A Population is not safe for concurrent use.
	index  *chainIndex
	txRefs [][]txRef
}

// popOutput is an unspent output and the key it pays.
type popOutput struct {
	op    wire.OutPoint
	key   int32
	value int64
}

// popBuilder holds the generator's state.
type popBuilder struct {
	cfg      PopulationConfig
	rng      *rand.Rand
	pop      *Population
	userUTXO [][]popOutput
	walUTXO  [][]popOutput
	nextUser uint64
	height   int32
}

// NewPopulation generates the chain and the wallets' lives. It is a pure
// function of cfg.
func NewPopulation(cfg PopulationConfig) (*Population, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	b := &popBuilder{
		cfg:      cfg,
		rng:      rand.New(rand.NewPCG(cfg.Seed, populationKeyStream)),
		pop:      &Population{Config: cfg, KeyIndex: map[[20]byte]int32{}},
		userUTXO: make([][]popOutput, cfg.Users),
	}
	kinds := cfg.Kinds
	if len(kinds) == 0 {
		kinds = Kinds
	}
	nWallets := cfg.WalletsPerKind * len(kinds)
	b.walUTXO = make([][]popOutput, nWallets)
	for i := range nWallets {
		w := &PopWallet{ID: i, Kind: kinds[i%len(kinds)]}
		w.Birthday = int32(1 + b.rng.IntN(max(1, cfg.Blocks/birthdayShare)))
		b.pop.Wallets = append(b.pop.Wallets, w)
	}
	prev := chainhash.Hash{}
	for h := range cfg.Blocks {
		blk := b.block(h, prev)
		prev = blk.BlockHash()
		b.pop.Chain = append(b.pop.Chain, blk)
	}
	for _, w := range b.pop.Wallets {
		b.schedule(w)
	}
	return b.pop, nil
}

// register records a key's first payment and returns its index.
func (b *popBuilder) register(k Key, owner int32) int32 {
	var h [20]byte
	copy(h[:], k.Hash160)
	if id, ok := b.pop.KeyIndex[h]; ok {
		return id
	}
	id := int32(len(b.pop.Keys))
	b.pop.Keys = append(b.pop.Keys, KeyInfo{Key: k, Owner: owner, FirstSeen: b.height})
	b.pop.KeyIndex[h] = id
	return id
}

// userKey returns a fresh key of user u, registered.
func (b *popBuilder) userKey(u int) int32 {
	k := synthKey(b.cfg.Seed, populationUserStream, b.nextUser)
	b.nextUser++
	return b.register(k, int32(-1-u))
}

// walletKey returns wallet w's next unused key, registered.
func (b *popBuilder) walletKey(w *PopWallet) int32 {
	k := b.pop.walletKey(w, w.Used)
	id := b.register(k, int32(w.ID))
	w.KeyIDs[w.Used] = id
	w.FirstUse = append(w.FirstUse, b.height)
	w.Used++
	return id
}

// block builds block h on prev.
func (b *popBuilder) block(h int, prev chainhash.Hash) *wire.MsgBlock {
	b.height = int32(h)
	blk := wire.NewMsgBlock(wire.NewBlockHeader(1, &prev, &chainhash.Hash{}, 0, uint32(h)))
	// wire.NewBlockHeader stamps the wall clock: a synthetic chain's
	// headers (its block hashes, BIP158's filter keys) must not depend on
	// when it was built.
	blk.Header.Timestamp = simEpoch.Add(time.Duration(h) * blockInterval)
	miner := b.rng.IntN(b.cfg.Users)
	cb := wire.NewMsgTx(wire.TxVersion)
	cb.AddTxIn(&wire.TxIn{PreviousOutPoint: wire.OutPoint{Index: wire.MaxPrevOutIndex}, SignatureScript: synth.HeightScript(h)})
	mk := b.userKey(miner)
	cb.AddTxOut(wire.NewTxOut(coinbaseValue, synth.P2PKH(b.pop.Keys[mk].Hash160)))
	var premined []popOutput
	if h == 0 {
		for u := range b.cfg.Users {
			k := b.userKey(u)
			premined = append(premined, popOutput{op: wire.OutPoint{Index: uint32(len(cb.TxOut))}, key: k, value: coinbaseValue})
			cb.AddTxOut(wire.NewTxOut(coinbaseValue, synth.P2PKH(b.pop.Keys[k].Hash160)))
		}
	}
	blk.AddTransaction(cb)
	txid := cb.TxHash()
	for i, o := range premined {
		o.op.Hash = txid
		b.userUTXO[i] = append(b.userUTXO[i], o)
	}
	b.userUTXO[miner] = append(b.userUTXO[miner], popOutput{op: outPoint(cb, 0), key: mk, value: coinbaseValue})
	for range b.cfg.TxsPerBlock {
		b.backgroundTx(blk)
	}
	if h == 0 {
		return blk
	}
	for _, w := range b.pop.Wallets {
		if b.height <= w.Birthday {
			continue
		}
		if b.rng.IntN(b.cfg.ReceiveEvery) == 0 {
			b.walletReceive(blk, w)
		}
		if b.rng.IntN(b.cfg.SpendEvery) == 0 {
			b.walletSpend(blk, w)
		}
	}
	return blk
}

// takeUTXOs removes up to n random outputs from pool.
func (b *popBuilder) takeUTXOs(pool *[]popOutput, n int) []popOutput {
	p := *pool
	var out []popOutput
	for range min(n, len(p)) {
		i := b.rng.IntN(len(p))
		out = append(out, p[i])
		p[i] = p[len(p)-1]
		p = p[:len(p)-1]
	}
	*pool = p
	return out
}

// richUser returns a random user with an unspent output, or -1.
func (b *popBuilder) richUser() int {
	start := b.rng.IntN(b.cfg.Users)
	for j := range b.cfg.Users {
		if u := (start + j) % b.cfg.Users; len(b.userUTXO[u]) > 0 {
			return u
		}
	}
	return -1
}

// popTx is a transaction under construction.
type popTx struct {
	tx    *wire.MsgTx
	total int64
	keys  []int32
}

// spend adds ins as inputs, revealing their keys' public keys.
func (b *popBuilder) spend(t *popTx, ins []popOutput) {
	if t.tx == nil {
		t.tx = wire.NewMsgTx(wire.TxVersion)
	}
	for _, in := range ins {
		k := &b.pop.Keys[in.key]
		t.tx.AddTxIn(wire.NewTxIn(&in.op, synth.SpendScript(k.PubKey), nil))
		k.Revealed = true
		t.total += in.value
		if !containsKey(t.keys, in.key) {
			t.keys = append(t.keys, in.key)
		}
	}
}

// containsKey reports whether ks holds k.
func containsKey(ks []int32, k int32) bool {
	for _, x := range ks {
		if x == k {
			return true
		}
	}
	return false
}

// pay adds an output to key and returns its outpoint once the
// transaction is final (see finish).
func (b *popBuilder) pay(t *popTx, key int32, value int64) int {
	t.tx.AddTxOut(wire.NewTxOut(value, synth.P2PKH(b.pop.Keys[key].Hash160)))
	return len(t.tx.TxOut) - 1
}

// finish adds the transaction to blk and records its co-spend.
func (b *popBuilder) finish(blk *wire.MsgBlock, t *popTx) *wire.MsgTx {
	blk.AddTransaction(t.tx)
	if len(t.keys) > 1 {
		b.pop.CoSpends = append(b.pop.CoSpends, t.keys)
	}
	return t.tx
}

// backgroundTx adds a payment from one user to another, with change, and
// now and then a second user's input (a join).
func (b *popBuilder) backgroundTx(blk *wire.MsgBlock) {
	from := b.richUser()
	if from < 0 {
		return
	}
	t := &popTx{}
	b.spend(t, b.takeUTXOs(&b.userUTXO[from], 1+b.rng.IntN(maxCoSpend)))
	other := -1
	if b.rng.Float64() < b.cfg.BackgroundJoinShare {
		if other = b.richUser(); other == from || other < 0 {
			other = -1
		} else {
			b.spend(t, b.takeUTXOs(&b.userUTXO[other], 1))
		}
	}
	to := b.rng.IntN(b.cfg.Users)
	payKey, changeKey := b.userKey(to), b.userKey(from)
	pay := t.total / 4
	outs := []struct {
		key  int32
		user int
		v    int64
	}{{payKey, to, pay}, {changeKey, from, t.total/2 - pay}}
	if other >= 0 {
		outs = append(outs, struct {
			key  int32
			user int
			v    int64
		}{b.userKey(other), other, t.total - t.total/2})
	} else {
		outs[1].v = t.total - pay
	}
	var idx []int
	for _, o := range outs {
		idx = append(idx, b.pay(t, o.key, o.v))
	}
	tx := b.finish(blk, t)
	for i, o := range outs {
		b.userUTXO[o.user] = append(b.userUTXO[o.user], popOutput{op: outPoint(tx, uint32(idx[i])), key: o.key, value: o.v})
	}
}

// walletReceive adds a payment from a background user to w's next key.
func (b *popBuilder) walletReceive(blk *wire.MsgBlock, w *PopWallet) {
	from := b.richUser()
	if from < 0 {
		return
	}
	t := &popTx{}
	b.spend(t, b.takeUTXOs(&b.userUTXO[from], 1))
	key, change := b.walletKey(w), b.userKey(from)
	pay := t.total / 2
	i := b.pay(t, key, pay)
	j := b.pay(t, change, t.total-pay)
	tx := b.finish(blk, t)
	b.walUTXO[w.ID] = append(b.walUTXO[w.ID], popOutput{op: outPoint(tx, uint32(i)), key: key, value: pay})
	b.userUTXO[from] = append(b.userUTXO[from], popOutput{op: outPoint(tx, uint32(j)), key: change, value: t.total - pay})
	w.Txs++
}

// walletSpend spends one to maxWalletInputs of w's coins to a user or
// another wallet, with change to w's next key, sometimes joined by a
// background user's input.
func (b *popBuilder) walletSpend(blk *wire.MsgBlock, w *PopWallet) {
	if len(b.walUTXO[w.ID]) == 0 {
		return
	}
	t := &popTx{}
	b.spend(t, b.takeUTXOs(&b.walUTXO[w.ID], 1+b.rng.IntN(maxWalletInputs)))
	joiner := -1
	if b.rng.Float64() < b.cfg.JoinShare {
		if joiner = b.richUser(); joiner >= 0 {
			b.spend(t, b.takeUTXOs(&b.userUTXO[joiner], 1))
		}
	}
	var payee *PopWallet
	var payKey int32
	if b.rng.Float64() < b.cfg.WalletPayShare {
		if p := b.pop.Wallets[b.rng.IntN(len(b.pop.Wallets))]; p != w && b.height > p.Birthday {
			payee = p
		}
	}
	to := -1
	if payee != nil {
		payKey = b.walletKey(payee)
		payee.Txs++
	} else {
		to = b.rng.IntN(b.cfg.Users)
		payKey = b.userKey(to)
	}
	change := b.walletKey(w)
	pay := t.total / 3
	rest := t.total - pay
	i := b.pay(t, payKey, pay)
	j := b.pay(t, change, rest/2)
	jk := -1
	var jkey int32
	if joiner >= 0 {
		jkey = b.userKey(joiner)
		jk = b.pay(t, jkey, rest-rest/2)
	} else {
		t.tx.TxOut[j].Value = rest
	}
	tx := b.finish(blk, t)
	if payee != nil {
		b.walUTXO[payee.ID] = append(b.walUTXO[payee.ID], popOutput{op: outPoint(tx, uint32(i)), key: payKey, value: pay})
	} else {
		b.userUTXO[to] = append(b.userUTXO[to], popOutput{op: outPoint(tx, uint32(i)), key: payKey, value: pay})
	}
	b.walUTXO[w.ID] = append(b.walUTXO[w.ID], popOutput{op: outPoint(tx, uint32(j)), key: change, value: tx.TxOut[j].Value})
	if jk >= 0 {
		b.userUTXO[joiner] = append(b.userUTXO[joiner], popOutput{op: outPoint(tx, uint32(jk)), key: jkey, value: tx.TxOut[jk].Value})
	}
	w.Txs++
}

// schedule draws w's client sessions: the first starts soon after the
// birthday, each lasts about SessionBlocks, then the client is offline
// about OfflineBlocks.
func (b *popBuilder) schedule(w *PopWallet) {
	last := int32(b.cfg.Blocks - 1)
	s := w.Birthday + int32(b.rng.IntN(firstStartMax+1))
	for s <= last {
		e := min(last, s+int32(1+b.rng.IntN(2*b.cfg.SessionBlocks)))
		w.Sessions = append(w.Sessions, [2]int32{s, e})
		s = e + 1 + int32(1+b.rng.IntN(2*b.cfg.OfflineBlocks))
	}
}

// OnChainCandidates returns every key paid on chain as a candidate:
// [hash160, pubkey] when a spend revealed the public key, [hash160]
// otherwise, with the height of its first payment.
func (p *Population) OnChainCandidates() element.SliceUniverse {
	out := make(element.SliceUniverse, len(p.Keys))
	for i, k := range p.Keys {
		c := element.Candidate{Forms: [][]byte{k.Hash160}, FirstSeen: k.FirstSeen}
		if k.Revealed {
			c.Forms = append(c.Forms, k.PubKey)
		}
		out[i] = c
	}
	return out
}

// hash20 returns b as a hash160 array (b must hold 20 bytes).
func hash20(b []byte) [20]byte {
	var h [20]byte
	copy(h[:], b)
	return h
}

// keyOfPush returns the key index of a hash160 push, or -1.
func (p *Population) keyOfPush(push []byte) int32 {
	if len(push) != hash160Size {
		return -1
	}
	if id, ok := p.KeyIndex[hash20(push)]; ok {
		return id
	}
	return -1
}
