package experiments

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/bloomwatch/bloomwatch/bip37"
	"github.com/bloomwatch/bloomwatch/filterpolicy"
	"github.com/bloomwatch/bloomwatch/transcript"
	"github.com/btcsuite/btcd/wire"
)

// The population's light clients: each wallet's client plays its kind's
// filter policy over its sessions, against a serving peer that applies
// BLOOM_UPDATE_ALL to its copy of the filter block by block (so the false
// positives of a long session saturate it and trigger the kinds' resets),
// and every session's filterloads and block requests are recorded as the
// serving peer sees them: one transcript per session.

// Client behaviour constants.
const (
	// popPeer is the serving peer every session talks to (the crawler).
	popPeer = "127.0.0.1:18444"
	// blockInterval spaces simulated blocks in record times.
	blockInterval = 10 * time.Minute
	// bitcoinjResetMinTested is the fewest non-wallet transactions the
	// observed false-positive rate is computed over before it can
	// trigger a reset.
	bitcoinjResetMinTested = 200
	// resetFactor is the reset threshold over the target rate (bitcoinj
	// 0.13's MAX_FP_RATE_INCREASE, 2 in 0.12.x; breadwallet's disconnect
	// at 10 times its 0.0005; filterpolicy.DefaultReloadFPRatio).
	resetFactor = 10
	// bitcoinjThresholdDiv: bitcoinj derives more keys when fewer than
	// lookahead/bitcoinjThresholdDiv remain unused.
	bitcoinjThresholdDiv = 3
	// clientStream separates the clients' random choices (tweaks,
	// delays) from the chain's.
	clientStream = 2000
)

// RequestPolicy is how a client requests blocks: what the serving peer
// learns from the request pattern.
type RequestPolicy struct {
	// RoundBirthday starts a wallet's first catch-up at its birthday
	// rounded down to a multiple of this many blocks (0 or 1: the
	// birthday itself).
	RoundBirthday int32
	// RefetchWindow re-fetches, after a reload for new keys, from the
	// start of the aligned window of this many blocks that holds the
	// block which made the wallet derive them (0 or 1: from that block,
	// bloomwatch's behaviour).
	RefetchWindow int32
	// ReloadDelay postpones a reload for new keys by a random 0 to this
	// many blocks (0: at once, right after the block that triggered it).
	// The old filter still holds the rest of the lookahead, so only a
	// payment to one of the few newest keys within the delay could be
	// missed (a wallet would then re-fetch from the aligned window).
	ReloadDelay int32
	// InFlight is how many blocks past the one being applied a client
	// has requested during a catch-up (filterpolicy.DefaultWindow); a re-fetch
	// covers them.
	InFlight int32
}

// ClientOptions changes the kinds' filter policies for an experiment.
type ClientOptions struct {
	Requests RequestPolicy
	// Decoys, when set, returns the decoy elements wallet w inserts in
	// the filter it loads at height h beside its own (the noise
	// policies).
	Decoys func(w *PopWallet, h int32) [][]byte
	// FPRate, when positive, replaces every kind's target rate.
	FPRate float64
	// RateScale, when positive, multiplies every kind's target rate in
	// place of PopulationConfig.FPRateScale.
	RateScale float64
	// OneForm makes bitcoinj-like clients insert each key's hash160
	// only, not its public key (the mitigation "one form per key").
	OneForm bool
	// PersistTweak makes bitcoinj- and breadwallet-like clients keep one
	// tweak for the wallet's life, as bloomwatch does.
	PersistTweak bool
	// Shards splits each filter's keys and outpoints over this many
	// peers, each loaded with a filter of its own share (0 or 1: one
	// filter for every peer); Records then carry a Peer per shard.
	Shards int
	// Only, when set, simulates the wallets of this kind alone.
	Only WalletKind
}

// LoadInfo is one filterload of a session.
type LoadInfo struct {
	Height int32
	Reason string
	Filter *bip37.Filter
	// Keys is the number of wallet keys the client watches (all shards
	// together); Elements the elements inserted in this filter (keys'
	// forms, outpoints, decoys).
	Keys, Elements int
	// Shard is the peer's share of a sharded load (0 unsharded).
	Shard int
}

// Refetch is one re-fetch after a reload for new keys.
type Refetch struct {
	// Trigger is the block whose wallet transaction made the client
	// derive new keys (the truth); From and Count the blocks requested.
	Trigger     int32
	From        int32
	Count       int64
	LoadedAfter int32 // the height the new filter was loaded at
}

// Session is one client session of a wallet: what the serving peer
// recorded (Records), and the truth behind it.
type Session struct {
	Wallet int
	Kind   WalletKind
	// BothForms reports filters holding public keys beside hashes (a
	// bitcoinj-like client not told to insert one form).
	BothForms  bool
	Index      int
	Start, End int32
	Records    []transcript.Record
	Loads      []LoadInfo
	Refetches  []Refetch
	// FPTxs counts the non-wallet transactions the peers sent
	// (bandwidth; a transaction two shards match is sent twice), Blocks
	// the blocks filtered, WalletTxs the wallet's transactions.
	FPTxs, Blocks, WalletTxs int
}

// walletEvent is a change of a wallet's coins at a height.
type walletEvent struct {
	height int32
	op     wire.OutPoint
	add    bool
}

// chainIndex is what the clients need to know of the chain: each wallet's
// coin events, and which transactions of each block are whose.
type chainIndex struct {
	events [][]walletEvent
	// txOwners[h][i] lists the wallets transaction i of block h touches.
	txOwners [][][]int32
}

// indexChain walks the chain once.
func (p *Population) indexChain() *chainIndex {
	if p.index != nil {
		return p.index
	}
	ix := &chainIndex{events: make([][]walletEvent, len(p.Wallets)), txOwners: make([][][]int32, len(p.Chain))}
	coinOwner := map[wire.OutPoint]int32{}
	for h, b := range p.Chain {
		ix.txOwners[h] = make([][]int32, len(b.Transactions))
		for i, tx := range b.Transactions {
			var owners []int32
			for _, in := range tx.TxIn {
				if w, ok := coinOwner[in.PreviousOutPoint]; ok {
					delete(coinOwner, in.PreviousOutPoint)
					ix.events[w] = append(ix.events[w], walletEvent{height: int32(h), op: in.PreviousOutPoint})
					if !containsKey(owners, w) {
						owners = append(owners, w)
					}
				}
			}
			txid := tx.TxHash()
			for v, out := range tx.TxOut {
				k := p.keyOfPush(p2pkhHash(out.PkScript))
				if k < 0 || p.Keys[k].Owner < 0 {
					continue
				}
				w := p.Keys[k].Owner
				op := wire.OutPoint{Hash: txid, Index: uint32(v)}
				coinOwner[op] = w
				ix.events[w] = append(ix.events[w], walletEvent{height: int32(h), op: op, add: true})
				if !containsKey(owners, w) {
					owners = append(owners, w)
				}
			}
			ix.txOwners[h][i] = owners
		}
	}
	p.index = ix
	return ix
}

// p2pkhHash returns the hash160 a synthetic P2PKH script pays, or nil.
func p2pkhHash(script []byte) []byte {
	const hashAt, p2pkhLen = 3, 25
	if len(script) != p2pkhLen {
		return nil
	}
	return script[hashAt : hashAt+hash160Size]
}

// client is one wallet's light client across its sessions.
type client struct {
	pop       *Population
	ix        *chainIndex
	w         *PopWallet
	opts      ClientOptions
	rng       *rand.Rand
	rate      float64
	tweak     uint32
	synced    int32 // last block applied
	watched   int   // keys watched
	lookahead int
	coins     map[wire.OutPoint]bool
	evAt      int // next event of w to apply
	sess      *Session
	servers   []*bip37.Filter
	loadRates []float64
	tested    int
	fp        int
	pending   int32 // height at which a delayed reload for new keys is due (-1: none)
	trigger   int32 // the block that made it due
	seq       uint64
}

// Simulate plays every wallet's client over its sessions and returns the
// sessions, wallet by wallet. It is a pure function of the population and
// opts.
func (p *Population) Simulate(opts ClientOptions) ([]*Session, error) {
	return p.SimulateProgress(opts, nil)
}

// SimulateProgress is Simulate, telling progress (when not nil) wallet by
// wallet as stage "clients".
func (p *Population) SimulateProgress(opts ClientOptions, progress ProgressFunc) ([]*Session, error) {
	if opts.FPRate != 0 && !(opts.FPRate > 0 && opts.FPRate < 1) {
		return nil, fmt.Errorf("%w: false-positive rate %v", ErrBadConfig, opts.FPRate)
	}
	if opts.RateScale < 0 || opts.RateScale*BitcoinjFPRate >= 1 {
		return nil, fmt.Errorf("%w: rate scale %v", ErrBadConfig, opts.RateScale)
	}
	r := opts.Requests
	if r.RoundBirthday < 0 || r.RefetchWindow < 0 || r.ReloadDelay < 0 || r.InFlight < 0 {
		return nil, fmt.Errorf("%w: request policy %+v", ErrBadConfig, r)
	}
	ix := p.indexChain()
	var out []*Session
	for _, w := range p.Wallets {
		if opts.Only != 0 && w.Kind != opts.Only {
			continue
		}
		c := &client{
			pop: p, ix: ix, w: w, opts: opts, coins: map[wire.OutPoint]bool{},
			rng:    rand.New(rand.NewPCG(p.Config.Seed, clientStream+uint64(w.ID))),
			synced: w.Birthday - 1, pending: -1, lookahead: p.Config.Lookahead,
		}
		if c.lookahead == 0 {
			c.lookahead = KindLookahead(w.Kind)
		}
		c.watched = c.lookahead
		c.rate = c.targetRate()
		c.tweak = c.rng.Uint32()
		if rb := r.RoundBirthday; rb > 1 {
			c.synced = (w.Birthday/rb)*rb - 1
		}
		for i, s := range w.Sessions {
			sess, err := c.session(i, s[0], s[1])
			if err != nil {
				return nil, fmt.Errorf("wallet %d session %d: %w", w.ID, i, err)
			}
			out = append(out, sess)
		}
		if progress != nil {
			progress(stageClients, w.ID+1, len(p.Wallets))
		}
	}
	return out, nil
}

// targetRate is the kind's target false-positive rate.
func (c *client) targetRate() float64 {
	if c.opts.FPRate > 0 {
		return c.opts.FPRate
	}
	scale := c.pop.Config.FPRateScale
	if c.opts.RateScale > 0 {
		scale = c.opts.RateScale
	}
	if c.w.Kind == KindBloomwatch {
		return filterpolicy.DefaultFPRate * scale
	}
	return BitcoinjFPRate * scale
}

// usedBy returns the number of w's keys first paid at or before h.
func (c *client) usedBy(h int32) int {
	n := 0
	for _, fu := range c.w.FirstUse {
		if fu <= h {
			n++
		}
	}
	return n
}

// applyEvents brings the client's coins up to height h.
func (c *client) applyEvents(h int32) {
	evs := c.ix.events[c.w.ID]
	for c.evAt < len(evs) && evs[c.evAt].height <= h {
		e := evs[c.evAt]
		if e.add {
			c.coins[e.op] = true
		} else {
			delete(c.coins, e.op)
		}
		c.evAt++
	}
}

// session plays session i from start to end.
func (c *client) session(i int, start, end int32) (*Session, error) {
	c.sess = &Session{Wallet: c.w.ID, Kind: c.w.Kind, Index: i, Start: start, End: end,
		BothForms: c.w.Kind == KindBitcoinj && !c.opts.OneForm}
	c.applyEvents(c.synced)
	c.watched = max(c.watched, c.usedBy(c.synced)+c.lookahead)
	if c.w.Kind != KindBloomwatch && !c.opts.PersistTweak {
		c.tweak = c.rng.Uint32() // a fresh tweak at every start
	}
	reason := transcript.ReasonRestart
	if i == 0 {
		reason = transcript.ReasonInitial
	}
	if err := c.load(start, reason); err != nil {
		return nil, err
	}
	if from := c.synced + 1; from <= start {
		c.request(start, from, int64(start-from+1), transcript.ReasonSync)
	}
	for h := c.synced + 1; h <= end; h++ {
		if h > start {
			c.request(h, h, 1, transcript.ReasonLive)
		}
		if err := c.block(h, start); err != nil {
			return nil, err
		}
	}
	return c.sess, nil
}

// elements returns the filter's elements: decoys, then each watched key's
// forms, then (hash-and-outpoint kinds) the unspent outpoints.
func (c *client) elements(h int32) (els [][]byte, ops []wire.OutPoint) {
	if c.opts.Decoys != nil {
		els = append(els, c.opts.Decoys(c.w, h)...)
	}
	for i := range c.watched {
		k := c.pop.walletKey(c.w, i)
		els = append(els, k.Hash160)
		if c.w.Kind == KindBitcoinj && !c.opts.OneForm {
			els = append(els, k.PubKey)
		}
	}
	if c.w.Kind != KindBitcoinj {
		for op := range c.coins {
			ops = append(ops, op)
		}
		sortOutPoints(ops)
	}
	return els, ops
}

// newFilter sizes a filter for n elements by the kind's policy.
func (c *client) newFilter(n int) (*bip37.Filter, error) {
	if c.w.Kind == KindBloomwatch {
		size, k := filterpolicy.FilterSize(n, c.rate)
		return bip37.NewFilterFromBits(make([]byte, size), k, c.tweak, bip37.UpdateAll)
	}
	return bip37.NewFilter(uint32(n+BitcoinjHeadroom), c.rate, c.tweak, bip37.UpdateAll)
}

// load builds and sends a filter at height h: one per peer when the
// elements are sharded, each holding every shards-th element.
func (c *client) load(h int32, reason string) error {
	if c.w.Kind == KindBreadwallet && !c.opts.PersistTweak && reason != transcript.ReasonInitial && reason != transcript.ReasonRestart {
		c.tweak = c.rng.Uint32() // breadwallet draws a tweak for every filter
	}
	els, ops := c.elements(h)
	shards := max(1, c.opts.Shards)
	c.servers, c.loadRates, c.tested, c.fp = c.servers[:0], c.loadRates[:0], 0, 0
	for sh := range shards {
		var sEls [][]byte
		var sOps []wire.OutPoint
		for i, e := range els {
			if i%shards == sh {
				sEls = append(sEls, e)
			}
		}
		for i, op := range ops {
			if i%shards == sh {
				sOps = append(sOps, op)
			}
		}
		f, err := c.newFilter(len(sEls) + len(sOps))
		if err != nil {
			return fmt.Errorf("filter: %w", err)
		}
		for _, e := range sEls {
			f.Add(e)
		}
		for i := range sOps {
			f.AddOutPoint(&sOps[i])
		}
		c.servers, c.loadRates = append(c.servers, f.Clone()), append(c.loadRates, f.CurrentFPRate())
		c.sess.Loads = append(c.sess.Loads, LoadInfo{Height: h, Reason: reason, Filter: f, Keys: c.watched, Elements: len(sEls) + len(sOps), Shard: sh})
		c.recordTo(shardPeer(sh), h, transcript.Record{Height: h, Kind: transcript.KindFilterLoad, Filter: f.Serialize(), Reason: reason})
	}
	return nil
}

// shardPeer is the address of the peer that holds shard sh.
func shardPeer(sh int) string {
	if sh == 0 {
		return popPeer
	}
	return fmt.Sprintf("127.0.0.1:%d", simPeerBase+sh)
}

// request records a getdata of count blocks from from, sent at height at.
func (c *client) request(at, from int32, count int64, reason string) {
	c.record(at, transcript.Record{Height: from, Kind: transcript.KindGetData, Count: count, Reason: reason})
}

// record appends r, sent to the first peer when the chain was at height
// at, to the session's transcript as the peer saw it.
func (c *client) record(at int32, r transcript.Record) { c.recordTo(popPeer, at, r) }

// recordTo appends r, sent to peer when the chain was at height at.
func (c *client) recordTo(peer string, at int32, r transcript.Record) {
	r.Seq = c.seq
	c.seq++
	r.Time = simEpoch.Add(time.Duration(at) * blockInterval)
	r.Peer = peer
	r.Via = transcript.ViaDirect
	r.V = transcript.VersionFor(r.Kind)
	c.sess.Records = append(c.sess.Records, r)
}

// block has the serving peer filter block h, and the client apply it.
func (c *client) block(h, start int32) error {
	b := c.pop.Chain[h]
	owners := c.ix.txOwners[h]
	mine := false
	for i, tx := range b.Transactions {
		sent := 0
		for _, srv := range c.servers {
			if srv.MatchTxAndUpdate(tx) {
				sent++
			}
		}
		if containsKey(owners[i], int32(c.w.ID)) {
			mine = true
			c.sess.WalletTxs++
			continue
		}
		c.tested++
		if sent > 0 {
			c.fp++
			c.sess.FPTxs += sent
		}
	}
	c.sess.Blocks++
	c.synced = h
	c.applyEvents(h)
	used := c.usedBy(h)
	if mine && c.pending < 0 && c.needsKeys(used) {
		c.pending, c.trigger = h, h
		if d := c.opts.Requests.ReloadDelay; d > 0 {
			c.pending = h + int32(c.rng.IntN(int(d)+1))
		}
	}
	if c.pending >= 0 && h >= c.pending {
		c.pending = -1
		c.watched = used + c.lookahead
		if err := c.load(h, transcript.ReasonNewKey); err != nil {
			return err
		}
		c.refetch(h, start)
		return nil
	}
	if c.drifted() {
		return c.load(h, transcript.ReasonFPDrift)
	}
	return nil
}

// needsKeys reports whether, with used keys paid, the client derives new
// keys and reloads its filter: bloomwatch and breadwallet keep the full
// gap limit unused, deriving a key for every key paid; bitcoinj derives a
// batch when fewer than a third of its lookahead remain unused
// (DeterministicKeyChain's lookahead threshold).
func (c *client) needsKeys(used int) bool {
	if c.w.Kind == KindBitcoinj {
		return used+c.lookahead-c.lookahead/bitcoinjThresholdDiv > c.watched
	}
	return used+c.lookahead > c.watched
}

// drifted reports whether the kind's reset rule fires.
func (c *client) drifted() bool {
	if c.w.Kind == KindBloomwatch {
		for i, srv := range c.servers {
			if srv.CurrentFPRate() > resetFactor*math.Max(c.rate, c.loadRates[i]) {
				return true
			}
		}
		return false
	}
	return c.tested >= bitcoinjResetMinTested && float64(c.fp)/float64(c.tested) > resetFactor*c.rate
}

// refetch has a bloomwatch client fetch again, after a reload at h for
// keys a transaction of block c.trigger made it derive, the blocks from
// the trigger (or from the start of its aligned window) through the ones
// in flight. The other kinds do not re-fetch.
func (c *client) refetch(h, start int32) {
	if c.w.Kind != KindBloomwatch {
		return
	}
	from := c.trigger
	if win := c.opts.Requests.RefetchWindow; win > 1 {
		from = (from / win) * win
	}
	from = max(from, c.w.Birthday)
	to := h
	if h < start { // catching up: the blocks in flight are fetched again
		to = min(start, h+c.opts.Requests.InFlight)
	}
	n := int64(to - from + 1)
	c.sess.Refetches = append(c.sess.Refetches, Refetch{Trigger: c.trigger, From: from, Count: n, LoadedAfter: h})
	c.record(h, transcript.Record{Height: from, Kind: transcript.KindGetData, Count: n, Reason: transcript.ReasonRefetch})
}

// walletKey returns wallet w's key i, deriving it if needed (keys beyond
// the ones paid on chain are the lookahead).
func (p *Population) walletKey(w *PopWallet, i int) Key {
	for len(w.Keys) <= i {
		j := len(w.Keys)
		w.Keys = append(w.Keys, synthKey(p.Config.Seed, populationKeyStream+walletStreamStride+uint64(w.ID), uint64(j)))
		w.KeyIDs = append(w.KeyIDs, -1)
	}
	return w.Keys[i]
}

// sortOutPoints orders outpoints by txid and index, for a deterministic
// filter.
func sortOutPoints(ops []wire.OutPoint) {
	less := func(a, b wire.OutPoint) int {
		for i := range a.Hash {
			if a.Hash[i] != b.Hash[i] {
				return int(a.Hash[i]) - int(b.Hash[i])
			}
		}
		return int(a.Index) - int(b.Index)
	}
	slices.SortFunc(ops, less)
}
