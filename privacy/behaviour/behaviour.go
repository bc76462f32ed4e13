package behaviour

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/bloomwatch/bloomwatch/bip37"
	"github.com/bloomwatch/bloomwatch/privacy/replay"
	"github.com/bloomwatch/bloomwatch/transcript"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
)

// Signals of the behaviour attack, as Score.Signal.
const (
	// SignalReloadTiming is the most recent sending with a transaction
	// before a reload that added elements.
	SignalReloadTiming = "reload-timing"
	// SignalRefetchStart is the first block with a transaction of a run
	// asked again of the same peer.
	SignalRefetchStart = "refetch-start"
	// SignalAny is every suspect, whichever signal named it.
	SignalAny = "any"
)

// Verdicts of a Score.
const (
	// VerdictPoints: more of the suspects are the wallet's than a random
	// pick of as many candidates gives, at the run's family-wise 5 %
	// level (Holm over the run's verdicts).
	VerdictPoints = "points at the wallet"
	// VerdictChance: a test with power finds the suspects' hits
	// consistent with a random pick.
	VerdictChance = "no better than chance"
	// VerdictAvoids: fewer hits than a random pick gives, at the
	// family-wise 5 % level: the behaviour avoids the wallet's items,
	// which tells a peer as much.
	VerdictAvoids = "avoids the wallet"
	// VerdictNoPower: the test could hardly fail (its power against a
	// signal that points is below MinVerdictPower: too few suspects, or
	// a chance range reaching 1.00), so neither "points" nor "no better
	// than chance" is printed.
	VerdictNoPower = "no verdict"
	// VerdictNoSuspects: the signal named nothing.
	VerdictNoSuspects = "no suspects"
	// VerdictNoTruth: suspects named, but no truth to score them.
	VerdictNoTruth = "no truth"
)

// Thresholds of the reload-timing signal.
const (
	// pointingSigmas is how many standard errors above zero the
	// estimated added elements must be for a reload to point.
	pointingSigmas = 2
	// minPointingAdded is the fewest estimated added elements that
	// point.
	minPointingAdded = 0.5
)

// maxRun bounds the heights one getdata record may cover in the
// attack's state (a record's Count is untrusted input: up to 2^31).
const maxRun = 1 << 20

// MaxTxs bounds the distinct transactions the attack keeps
// (about 100 MiB with their per-peer sets): a hostile peer's merkleblocks
// can flag every transaction of every block. Those past it are counted
// (Reading.DroppedTxs), not kept.
const MaxTxs = 1 << 20

// SentTx is one transaction a peer sent the client: in a filtered block
// (its merkleblock matched it) or relayed from its mempool.
type SentTx struct {
	ID chainhash.Hash `json:"txid"`
	// Wallet reports the wallet's transaction (the truth: the analyzer's
	// --truth, the client's own verdict in the meter); false without it.
	Wallet bool `json:"wallet"`
}

// Attack is the behaviour attack's state: fed, in order, the
// transcript records (Observe) and what each peer sent (Sent for the
// transactions of a filtered block, Relayed for mempool relays), it names
// the blocks and transactions the client's timing points at
// (Reading). The analyzer feeds it the sendings it reconstructs
// from the chain (Analyze); the live meter feeds it what the
// client received (privacy.Meter.ObserveSent). Pure and synchronous, not safe for
// concurrent use.
type Attack struct {
	truth bool
	pos   int64
	peers map[string]*behavePeer
	// byParams is the latest filter of each tweak and hash count sent
	// (the reference for a reload's added elements when the peer's own
	// previous filter is not of them).
	byParams map[[2]uint32]*bip37.Filter
	reloads  []*behaveReload
	refetch  []*behaveRefetch
	// The candidates: heights with a sent transaction, and sent
	// transactions (height -1 while only relayed), each with its truth.
	blocks map[int32]bool
	txs    map[chainhash.Hash]*behaveTx
	// changes counts the calls since the last reading; dropped the
	// transactions refused past MaxTxs.
	changes int
	dropped int
}

// behavePeer is what one peer sent and was asked.
type behavePeer struct {
	filter   *bip37.Filter
	lastLoad int64 // order key of its latest filterload; -1 before one
	lastEnd  int32 // last height of its latest getdata run; -2 before one
	items    []behaveItem
	asked    spanSet
	*sentBlocks
}

// sentBlocks is what one peer sent in filtered blocks.
type sentBlocks struct {
	sent    map[int32]map[chainhash.Hash]bool
	matched []int32 // heights with a sent transaction, sorted
}

// newSentBlocks returns an empty record of sent blocks.
func newSentBlocks() *sentBlocks {
	return &sentBlocks{sent: map[int32]map[chainhash.Hash]bool{}}
}

// behaveItem is one sending of a peer in order: a run of filtered blocks
// (a getdata record's) or a mempool relay.
type behaveItem struct {
	key      int64
	from, to int32 // the run's heights (relay: from > to)
	relay    []SentTx
	at       time.Time
}

// behaveReload is one filterload to a peer that held a filter before.
type behaveReload struct {
	peer              string
	key, prev         int64
	seq               uint64
	height            int32
	at                time.Time
	added, addedErr   float64
	nested, estimated bool
	pointing          bool
}

// behaveRefetch is one getdata run that asks a peer again.
type behaveRefetch struct {
	peer     string
	seq      uint64
	from, to int32
	at       time.Time
}

// behaveTx is a candidate transaction.
type behaveTx struct {
	wallet bool
	height int32
}

// NewAttack returns an empty behaviour attack. truth says whether the
// SentTx.Wallet flags it will be fed are known (the analyzer with
// --truth, the meter always).
func NewAttack(truth bool) *Attack {
	return &Attack{
		truth: truth, peers: map[string]*behavePeer{}, byParams: map[[2]uint32]*bip37.Filter{},
		blocks: map[int32]bool{}, txs: map[chainhash.Hash]*behaveTx{},
	}
}

// orderKey orders records and sendings: record i at 4i, the filtered
// blocks its getdata asked at 4i+1, relays that came after it at 4i+2.
func orderKey(pos int64, sub int64) int64 { return pos*4 + sub }

// peer returns the state of peer addr.
func (b *Attack) peer(addr string) *behavePeer {
	p := b.peers[addr]
	if p == nil {
		p = &behavePeer{lastLoad: -1, lastEnd: -2, sentBlocks: newSentBlocks()}
		b.peers[addr] = p
	}
	return p
}

// Observe feeds one transcript record, in transcript order. A filterload
// whose filter does not deserialize returns an error wrapping
// ErrBadFilterRecord and changes nothing; an unknown kind returns an
// error wrapping transcript.ErrBad.
func (b *Attack) Observe(r transcript.Record) error {
	var f *bip37.Filter
	switch r.Kind {
	case transcript.KindFilterLoad:
		var err error
		// The record's filter, shared with its other readers: load
		// keeps a copy, estimate only reads it.
		if f, err = r.Bloom(); err != nil {
			return fmt.Errorf("%w: seq %d: %w", replay.ErrBadFilterRecord, r.Seq, err)
		}
	case transcript.KindFilterAdd, transcript.KindFilterClear, transcript.KindGetData:
	default:
		return fmt.Errorf("%w: seq %d: unknown kind %q", transcript.ErrBad, r.Seq, r.Kind)
	}
	b.pos++
	b.changes++
	p := b.peer(r.Peer)
	key := orderKey(b.pos, 0)
	switch r.Kind {
	case transcript.KindFilterLoad:
		b.load(p, r, f, key)
	case transcript.KindFilterAdd:
		if p.filter != nil && bip37.CheckFilterAdd(r.Data) == nil {
			p.filter.Add(r.Data)
			b.remember(p.filter)
		}
	case transcript.KindFilterClear:
		p.filter = nil
	case transcript.KindGetData:
		b.request(p, r)
	}
	return nil
}

// remember records f as the latest filter of its tweak and hash count.
func (b *Attack) remember(f *bip37.Filter) {
	if !replay.MatchesAll(f) {
		b.byParams[[2]uint32{f.Tweak(), f.HashFuncs()}] = f
	}
}

// load handles a filterload: a reload when the peer held one before,
// with the observer's estimate of the elements it added.
func (b *Attack) load(p *behavePeer, r transcript.Record, f *bip37.Filter, key int64) {
	if p.lastLoad >= 0 {
		rl := &behaveReload{peer: r.Peer, key: key, prev: p.lastLoad, seq: r.Seq, height: r.Height, at: r.Time,
			added: -1, addedErr: -1}
		b.estimate(rl, p.filter, f)
		b.reloads = append(b.reloads, rl)
	}
	p.lastLoad = key
	p.filter = f.Clone()
	b.remember(p.filter)
}

// estimate sets what the peer infers a reload to f added over its own
// previous filter held (or, when that one is gone or of another tweak
// or hash count, the latest filter of f's sent to any peer), and whether
// the reload points (see Attack).
func (b *Attack) estimate(rl *behaveReload, held, f *bip37.Filter) {
	if replay.MatchesAll(f) {
		return // a match-all filter holds nothing to compare
	}
	params := [2]uint32{f.Tweak(), f.HashFuncs()}
	prev := b.byParams[params]
	if held != nil && !replay.MatchesAll(held) && held.Tweak() == f.Tweak() && held.HashFuncs() == f.HashFuncs() {
		prev = held
	}
	if prev != nil && string(prev.Serialize()) == string(f.Serialize()) {
		rl.added, rl.addedErr, rl.estimated = 0, 0, true
		return // the filter it held: nothing new
	}
	rl.pointing = true
	if prev == nil {
		return // nothing to compare: it may point
	}
	e, err := replay.EstimateReload(prev, f)
	if err != nil {
		return
	}
	switch {
	case e.Added >= 0 && e.AddedStdErr >= 0:
		rl.added, rl.addedErr, rl.nested = e.Added, e.AddedStdErr, true
	case e.NetStdErr >= 0:
		rl.added, rl.addedErr = e.NetChange, e.NetStdErr
	default:
		return // saturated: it may point
	}
	rl.estimated = true
	rl.pointing = rl.added >= minPointingAdded && rl.added > pointingSigmas*rl.addedErr
}

// request handles a getdata record: a run of filtered blocks the peer
// serves, and a re-fetch when it asks that peer again.
func (b *Attack) request(p *behavePeer, r transcript.Record) {
	n := min(max(r.Count, 1), maxRun)
	from := r.Height
	to := from + int32(n) - 1
	if to < from {
		to = math.MaxInt32 // overflow of a hostile record: clamp
	}
	// A run that starts where the peer's previous one ended continues
	// it (a re-fetch longer than one getdata): it starts nothing new.
	if h, ok := p.asked.firstCovered(from, to); ok && from != p.lastEnd+1 {
		b.refetch = append(b.refetch, &behaveRefetch{peer: r.Peer, seq: r.Seq, from: h, to: to, at: r.Time})
	}
	p.asked.add(from, to)
	p.lastEnd = to
	p.items = append(p.items, behaveItem{key: orderKey(b.pos, 1), from: from, to: to, at: r.Time})
}

// Sent feeds the transactions peer sent in the filtered block at height
// (its merkleblock matched them), in any serving of that block the peer
// was asked for. Transactions already known are merged.
func (b *Attack) Sent(peer string, height int32, txs []SentTx) {
	txs = b.admit(txs)
	if len(txs) == 0 || height < 0 {
		return
	}
	b.changes++
	p := b.peer(peer)
	set := p.sent[height]
	if set == nil {
		set = map[chainhash.Hash]bool{}
		p.sent[height] = set
		i, _ := slices.BinarySearch(p.matched, height)
		p.matched = slices.Insert(p.matched, i, height)
	}
	for _, tx := range txs {
		set[tx.ID] = set[tx.ID] || tx.Wallet
		b.blocks[height] = b.blocks[height] || tx.Wallet
		b.candidate(tx, height)
	}
}

// Relayed feeds transactions peer relayed from its mempool at time at,
// after the records observed so far. Relays with no record between them
// are one sending (at the first one's time).
func (b *Attack) Relayed(peer string, at time.Time, txs []SentTx) {
	txs = b.admit(txs)
	if len(txs) == 0 {
		return
	}
	b.changes++
	p := b.peer(peer)
	key := orderKey(b.pos, 2)
	if n := len(p.items); n > 0 && p.items[n-1].key == key {
		// Relays with no record between them are one sending.
		p.items[n-1].relay = append(p.items[n-1].relay, txs...)
	} else {
		p.items = append(p.items, behaveItem{key: key, from: 1, to: 0, relay: slices.Clone(txs), at: at})
	}
	for _, tx := range txs {
		b.candidate(tx, -1)
	}
}

// RelayedByAll feeds transactions relayed from a mempool at time at, as
// every peer that holds a filter relayed them: each peer whose filter
// matches a transaction announces it, and the client takes it from the
// first (the meter knows that one alone; the peers it did not take it
// from know they announced it too).
func (b *Attack) RelayedByAll(at time.Time, txs []SentTx) {
	addrs := make([]string, 0, len(b.peers))
	for addr, p := range b.peers {
		if p.filter != nil {
			addrs = append(addrs, addr)
		}
	}
	slices.Sort(addrs)
	for _, addr := range addrs {
		b.Relayed(addr, at, txs)
	}
}

// admit returns txs without the transactions that would take the
// candidates past MaxTxs (counted in dropped): what a peer sends
// is untrusted, and a merkleblock can flag every transaction of a block.
func (b *Attack) admit(txs []SentTx) []SentTx {
	if len(b.txs)+len(txs) <= MaxTxs {
		return txs
	}
	out := make([]SentTx, 0, len(txs))
	for _, tx := range txs {
		if _, known := b.txs[tx.ID]; known || len(b.txs)+len(out) < MaxTxs {
			out = append(out, tx)
			continue
		}
		b.dropped++
	}
	return out
}

// candidate records a sent transaction.
func (b *Attack) candidate(tx SentTx, height int32) {
	c := b.txs[tx.ID]
	if c == nil {
		c = &behaveTx{height: height}
		b.txs[tx.ID] = c
	}
	c.wallet = c.wallet || tx.Wallet
	if height >= 0 {
		c.height = height
	}
}

// Changes returns the number of records and sendings fed since the last
// Reading (a caller that reads often can skip a reading while it is 0).
func (b *Attack) Changes() int { return b.changes }

// matchedIn returns the highest (last) or lowest (first) height in
// [from, to] in which p sent a transaction.
func (p *sentBlocks) matchedIn(from, to int32, last bool) (int32, bool) {
	if last {
		i := sort.Search(len(p.matched), func(i int) bool { return p.matched[i] > to })
		if i > 0 && p.matched[i-1] >= from {
			return p.matched[i-1], true
		}
		return 0, false
	}
	i := sort.Search(len(p.matched), func(i int) bool { return p.matched[i] >= from })
	if i < len(p.matched) && p.matched[i] <= to {
		return p.matched[i], true
	}
	return 0, false
}

// behavePointer is what one signal pointed at.
type behavePointer struct {
	height int32 // -1 for a relay
	txs    []SentTx
	at     time.Time
}

// pointerState is what a reload's search for a pointer found.
type pointerState int

// The outcomes of a pointer search.
const (
	pointerNone pointerState = iota
	pointerFound
	// pointerAmbiguous: the latest sending with a transaction is a
	// filtered block of a run of several, sent together: a peer cannot
	// tell which of them the client had reached when it reloaded.
	pointerAmbiguous
)

// pointer returns the most recent sending with a transaction of the
// reload's peer between its previous filterload and it.
func (b *Attack) pointer(rl *behaveReload) (behavePointer, pointerState) {
	p := b.peers[rl.peer]
	end := sort.Search(len(p.items), func(i int) bool { return p.items[i].key >= rl.key })
	for i := end - 1; i >= 0 && p.items[i].key > rl.prev; i-- {
		it := p.items[i]
		if it.relay != nil {
			return behavePointer{height: -1, txs: it.relay, at: it.at}, pointerFound
		}
		if h, ok := p.matchedIn(it.from, it.to, true); ok {
			if it.from != it.to {
				return behavePointer{}, pointerAmbiguous
			}
			return behavePointer{height: h, txs: p.sentTxs(h), at: it.at}, pointerFound
		}
	}
	return behavePointer{}, pointerNone
}

// sentTxs returns the transactions p sent at height, sorted.
func (p *sentBlocks) sentTxs(h int32) []SentTx {
	out := make([]SentTx, 0, len(p.sent[h]))
	for id, w := range p.sent[h] {
		out = append(out, SentTx{ID: id, Wallet: w})
	}
	slices.SortFunc(out, func(a, b SentTx) int { return compareHash(a.ID, b.ID) })
	return out
}

// compareHash orders transaction ids bytewise.
func compareHash(a, b chainhash.Hash) int {
	return strings.Compare(string(a[:]), string(b[:]))
}

// spanSet is a set of heights as sorted, disjoint, non-adjacent spans.
type spanSet []span

// span is the heights from..to inclusive.
type span struct{ from, to int32 }

// firstCovered returns the lowest height in [from, to] the set holds.
func (s spanSet) firstCovered(from, to int32) (int32, bool) {
	i := sort.Search(len(s), func(i int) bool { return s[i].to >= from })
	if i < len(s) && s[i].from <= to {
		return max(s[i].from, from), true
	}
	return 0, false
}

// add adds [from, to], merging overlapping and adjacent spans.
func (s *spanSet) add(from, to int32) {
	v := *s
	i := sort.Search(len(v), func(i int) bool { return v[i].to >= from-1 })
	j := i
	for j < len(v) && (v[j].from <= to || (to < math.MaxInt32 && v[j].from == to+1)) {
		from, to = min(from, v[j].from), max(to, v[j].to)
		j++
	}
	*s = slices.Replace(v, i, j, span{from, to})
}
