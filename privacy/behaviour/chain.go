package behaviour

import (
	"context"
	"fmt"
	"slices"

	"github.com/bloomwatch/bloomwatch/bip37"
	"github.com/bloomwatch/bloomwatch/privacy/element"
	"github.com/bloomwatch/bloomwatch/privacy/replay"
	"github.com/bloomwatch/bloomwatch/transcript"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
)

// Source says how Analyze knows what each peer sent:
// the transcript records only what the client sent, so the analyzer
// rebuilds each peer's side from the getdata records and the chain, as
// the peer knows what it served.
const Source = "rebuilt from the transcript's getdata records and the chain: each peer served every block it was asked " +
	"for at the record's time, with the transactions its filter matched (the filter as loaded, grown by filteradd and by " +
	"BLOOM_UPDATE_* server updates, replayed in order); a block first asked alone, after the block below it was asked in an " +
	"earlier record, is taken as a new block, whose matched transactions each peer holding a filter relayed from its " +
	"mempool just after the getdata record before it (the chain does not say when a transaction reached a mempool)"

// Report is the behaviour attack's stage of privacy analyze.
type Report struct {
	Reading
	Detail
	// Source is Source.
	Source string `json:"source"`
	// Servings counts the filtered blocks the peers served (heights of
	// getdata records on the chain); LiveBlocks the blocks taken as new
	// (see Source); Relays the transactions rebuilt as relayed
	// from a mempool.
	Servings   int64 `json:"servings"`
	LiveBlocks int   `json:"live_blocks"`
	Relays     int   `json:"relays"`
	// Rules names the relevance rules the servers were replayed with
	// ("core" or "btcd", Options.Rules).
	Rules string `json:"server_rules"`
	// Note explains a report the attack could not run on (a transcript
	// without getdata records).
	Note string `json:"note,omitempty"`
}

// rulesName names relevance rules as ParseServerRules reads them.
func rulesName(r bip37.Rules) string {
	if r == bip37.RulesBtcd {
		return ServerRulesBtcd
	}
	return ServerRulesCore
}

// Names of the servers' relevance rules (ParseServerRules).
const (
	ServerRulesCore = "core"
	ServerRulesBtcd = "btcd"
)

// ParseServerRules reads a name of relevance rules: core (Bitcoin Core
// and bcoin) or btcd.
func ParseServerRules(name string) (bip37.Rules, error) {
	switch name {
	case ServerRulesCore:
		return bip37.RulesCore, nil
	case ServerRulesBtcd:
		return bip37.RulesBtcd, nil
	}
	return bip37.RulesCore, fmt.Errorf("%w: server rules %q (want core or btcd)", ErrBadConfig, name)
}

// noRequestsNote is Report.Note for a transcript without
// getdata records.
const noRequestsNote = "the transcript has no getdata records (written before version 3): the peers' sendings cannot be rebuilt"

// blockCacheSize is how many recent blocks Analyze keeps: a
// block is asked of a second peer for a check, or again after a reload,
// soon after the first time.
const blockCacheSize = 16

// Options tunes Analyze.
type Options struct {
	// Rules are the relevance rules the serving peers apply when they
	// filter (bip37.RulesCore: Bitcoin Core and bcoin; bip37.RulesBtcd:
	// btcd, which tests empty pushes too: once its filter covers the
	// empty element it sends every segwit transaction). The transcript
	// does not say which software a peer ran.
	Rules bip37.Rules
	// Limit cuts the report's lists (0: DefaultMaxListed).
	Limit int
}

// Analyze runs the behaviour attack (see Attack) on a
// transcript, rebuilding what each peer sent from the getdata records and
// ch (Source). With truth (the wallet's elements), each sent
// transaction is the wallet's when it pays one of them or spends an
// output that did (NewWalletTxs, read from the lowest height asked: an
// output the wallet received before it is not known), and a block is the
// wallet's when it holds one; the report then scores the suspects.
func Analyze(ctx context.Context, records []transcript.Record, ch element.Chain, truth []element.Candidate, opts Options) (*Report, error) {
	if ch == nil {
		return nil, fmt.Errorf("%w: the behaviour attack needs the chain", ErrBadConfig)
	}
	tip, err := ch.BestHeight()
	if err != nil {
		return nil, fmt.Errorf("%w: best height: %w", element.ErrChain, err)
	}
	rb := &rebuild{ctx: ctx, ch: ch, tip: tip, beh: NewAttack(len(truth) > 0), srv: map[string]*bip37.Filter{}, rules: opts.Rules}
	rb.plan(records)
	rep := &Report{Source: Source, LiveBlocks: rb.live}
	if rb.lo > rb.hi {
		if !rb.anyRequest {
			rep.Note = noRequestsNote
		}
	} else if len(truth) > 0 {
		if err := rb.readTruth(element.NewSetFromCandidates(truth)); err != nil {
			return nil, err
		}
	}
	for i, r := range records {
		if err := rb.replay(i, r); err != nil {
			return nil, err
		}
	}
	rep.Reading, rep.Detail = rb.beh.Detail(opts.Limit)
	rep.Rules = rulesName(opts.Rules)
	rep.Servings, rep.Relays = rb.servings, rb.relays
	return rep, nil
}

// rebuild is Analyze's working state.
type rebuild struct {
	ctx context.Context
	ch  element.Chain
	tip int32
	beh *Attack
	// srv is each peer's filter as the server holds it, tested with
	// rules.
	srv   map[string]*bip37.Filter
	rules bip37.Rules
	// relayAfter[i] is the new block whose transactions are relayed
	// after record i (0: none); lo..hi the heights asked on the chain.
	relayAfter map[int]int32
	lo, hi     int32
	anyRequest bool
	live       int
	wallet     map[chainhash.Hash]bool
	cache      []cachedBlock
	servings   int64
	relays     int
}

// cachedBlock is a recently read block.
type cachedBlock struct {
	height int32
	block  *wire.MsgBlock
}

// span returns the heights of a getdata record on the chain.
func (rb *rebuild) span(r transcript.Record) (int32, int32, bool) {
	n := min(max(r.Count, 1), maxRun)
	to := r.Height + int32(n) - 1
	if to < r.Height || to > rb.tip {
		to = rb.tip
	}
	return r.Height, to, r.Height <= to
}

// plan finds the heights asked and the new blocks: a block first asked
// alone (a record of one block) after the block below it was asked in an
// earlier record. Its transactions reached the mempools after the block
// below it was mined, which was before that earlier request, and before
// it was mined, which was before its own request: they are placed after
// the last getdata record before its own (for a live chain, the request
// of the block below it).
func (rb *rebuild) plan(records []transcript.Record) {
	rb.relayAfter = map[int]int32{}
	rb.lo, rb.hi = 1, 0
	var asked spanSet
	last := -1 // the latest getdata record
	for i, r := range records {
		if r.Kind != transcript.KindGetData {
			continue
		}
		rb.anyRequest = true
		prev := last
		last = i
		from, to, ok := rb.span(r)
		if !ok {
			continue
		}
		if rb.lo > rb.hi {
			rb.lo, rb.hi = from, to
		}
		rb.lo, rb.hi = min(rb.lo, from), max(rb.hi, to)
		if from == to && r.Count == 1 && from > 0 {
			_, seen := asked.firstCovered(from, from)
			_, below := asked.firstCovered(from-1, from-1)
			if !seen && below {
				rb.relayAfter[prev] = from
				rb.live++
			}
		}
		asked.add(from, to)
	}
}

// readTruth finds the wallet's transactions in the heights asked.
func (rb *rebuild) readTruth(truth *element.Set) error {
	rb.wallet = map[chainhash.Hash]bool{}
	wt := element.NewWalletTxs(truth)
	return element.WalkChain(rb.ctx, rb.ch, rb.lo, rb.hi, func(_ int32, b *wire.MsgBlock) error {
		for i, w := range wt.Block(b) {
			if w {
				rb.wallet[b.Transactions[i].TxHash()] = true
			}
		}
		return nil
	})
}

// block returns the block at h, from the cache when it is there.
func (rb *rebuild) block(h int32) (*wire.MsgBlock, error) {
	for _, c := range rb.cache {
		if c.height == h {
			return c.block, nil
		}
	}
	if err := rb.ctx.Err(); err != nil {
		return nil, err
	}
	b, err := rb.ch.BlockAt(h)
	if err != nil {
		return nil, fmt.Errorf("%w: block %d: %w", element.ErrChain, h, err)
	}
	if len(rb.cache) == blockCacheSize {
		rb.cache = rb.cache[1:]
	}
	rb.cache = append(rb.cache, cachedBlock{h, b})
	return b, nil
}

// replay plays record i: the peer's filter as the server holds it, and
// for a getdata record the blocks it served and the relays after it.
func (rb *rebuild) replay(i int, r transcript.Record) error {
	if err := rb.beh.Observe(r); err != nil {
		return err
	}
	switch r.Kind {
	case transcript.KindFilterLoad:
		f, err := bip37.Deserialize(r.Filter)
		if err != nil {
			return fmt.Errorf("%w: seq %d: %w", replay.ErrBadFilterRecord, r.Seq, err)
		}
		f.SetRules(rb.rules)
		rb.srv[r.Peer] = f
	case transcript.KindFilterAdd:
		if f := rb.srv[r.Peer]; f != nil && bip37.CheckFilterAdd(r.Data) == nil {
			f.Add(r.Data)
		}
	case transcript.KindFilterClear:
		delete(rb.srv, r.Peer)
	case transcript.KindGetData:
		return rb.serve(i, r)
	}
	return nil
}

// serve replays the blocks of getdata record i through its peer's
// filter, then the relays of the new block that follows it.
func (rb *rebuild) serve(i int, r transcript.Record) error {
	from, to, ok := rb.span(r)
	if !ok {
		return nil
	}
	f := rb.srv[r.Peer]
	for h := from; h <= to && f != nil; h++ {
		b, err := rb.block(h)
		if err != nil {
			return err
		}
		rb.servings++
		_, idx := bip37.FilterBlock(f, b)
		rb.beh.Sent(r.Peer, h, rb.sentTxs(b, idx))
	}
	next, ok := rb.relayAfter[i]
	if !ok {
		return nil
	}
	b, err := rb.block(next)
	if err != nil {
		return err
	}
	peers := make([]string, 0, len(rb.srv))
	for p := range rb.srv {
		peers = append(peers, p)
	}
	slices.Sort(peers)
	for _, p := range peers {
		var idx []int
		for j, tx := range b.Transactions {
			if j > 0 && rb.srv[p].MatchTxAndUpdate(tx) { // a coinbase is never relayed
				idx = append(idx, j)
			}
		}
		rb.relays += len(idx)
		rb.beh.Relayed(p, r.Time, rb.sentTxs(b, idx))
	}
	return nil
}

// sentTxs returns the transactions of b at idx with their truth.
func (rb *rebuild) sentTxs(b *wire.MsgBlock, idx []int) []SentTx {
	out := make([]SentTx, len(idx))
	for k, j := range idx {
		id := b.Transactions[j].TxHash()
		out[k] = SentTx{ID: id, Wallet: rb.wallet[id]}
	}
	return out
}
