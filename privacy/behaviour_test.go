package privacy

import (
	"context"
	"encoding/binary"
	"math"
	"math/rand"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bloomwatch/bloomwatch/bip37"
	"github.com/bloomwatch/bloomwatch/privacy/element"
	"github.com/bloomwatch/bloomwatch/privacy/internal/testkit"
	"github.com/bloomwatch/bloomwatch/privacy/stats"
	"github.com/bloomwatch/bloomwatch/transcript"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
)

// behaveClient plays a light client for the behaviour attack's unit
// tests: it holds a filter of elements it grows, and writes records.
type behaveClient struct {
	t     *testing.T
	b     *Behaviour
	seq   uint64
	now   time.Time
	elems int
}

// filter returns the client's filter: elems elements, one tweak.
func (c *behaveClient) filter() []byte {
	f, err := bip37.NewFilter(256, 0.0001, 7, bip37.UpdateAll)
	if err != nil {
		c.t.Fatal(err)
	}
	for i := 0; i < c.elems; i++ {
		var e [8]byte
		binary.LittleEndian.PutUint64(e[:], uint64(i))
		f.Add(e[:])
	}
	return f.Serialize()
}

// record feeds one record.
func (c *behaveClient) record(r transcript.Record) {
	c.t.Helper()
	c.seq++
	c.now = c.now.Add(50 * time.Millisecond)
	r.Seq, r.Time = c.seq, c.now
	if err := c.b.Observe(r); err != nil {
		c.t.Fatal(err)
	}
}

// load sends the client's filter to peer.
func (c *behaveClient) load(peer string, h int32) {
	c.record(transcript.Record{Kind: transcript.KindFilterLoad, Peer: peer, Height: h, Filter: c.filter()})
}

// txid returns a distinct transaction id.
func txid(h int32, i int) chainhash.Hash {
	var id chainhash.Hash
	binary.LittleEndian.PutUint32(id[:], uint32(h))
	id[4] = byte(i)
	return id
}

// behaveChain is a synthetic chain for the attack: which heights hold a
// wallet transaction and how many false positives each block sends.
type behaveChain struct {
	from, to int32
	wallet   map[int32]bool
	fps      map[int32]int
}

// newBehaveChain lays out blocks from..to: a wallet transaction in a
// block with probability 0.1 and one false positive with probability fp,
// independently (payments at regular intervals would make a wallet block
// followed by a longer gap than a false positive, which the "most recent
// block" rule would pick up).
func newBehaveChain(rng *rand.Rand, from, to int32, fp float64) behaveChain {
	c := behaveChain{from: from, to: to, wallet: map[int32]bool{}, fps: map[int32]int{}}
	for h := from; h <= to; h++ {
		c.wallet[h] = rng.Float64() < 0.1
		if rng.Float64() < fp {
			c.fps[h] = 1
		}
	}
	return c
}

// sent returns what a peer sends in block h.
func (c behaveChain) sent(h int32) []SentTx {
	var out []SentTx
	if c.wallet[h] {
		out = append(out, SentTx{ID: txid(h, 0), Wallet: true})
	}
	for i := 0; i < c.fps[h]; i++ {
		out = append(out, SentTx{ID: txid(h, 1+i)})
	}
	return out
}

// runLive serves every block of c to one peer, one getdata each, and
// reloads when reload says so after the block. The client's elements
// grow by one for each wallet block, or, with growAtReload, by one at
// each reload whatever it received (a reserve of keys topped up on the
// schedule: the reload's size says nothing).
func runLive(t *testing.T, c behaveChain, reload func(h int32) bool, growAtReload bool) BehaviourReading {
	t.Helper()
	cl := &behaveClient{t: t, b: NewBehaviour(true), now: time.Unix(1_700_000_000, 0), elems: 20}
	cl.load("p", c.from)
	for h := c.from; h <= c.to; h++ {
		cl.record(transcript.Record{Kind: transcript.KindGetData, Peer: "p", Height: h, Count: 1})
		cl.b.Sent("p", h, c.sent(h))
		if c.wallet[h] && !growAtReload {
			cl.elems++
		}
		if reload(h) {
			if growAtReload {
				cl.elems++
			}
			cl.load("p", h)
		}
	}
	return cl.b.Reading()
}

// TestBehaviourPointsAtImmediateReloads: a client that reloads right
// after each block holding its payment (today's bloomwatch) is named by
// the reload timing: every suspect block is the wallet's, and every
// wallet transaction is among the suspect transactions (beside the
// false positives of the same blocks), far above the base rate.
func TestBehaviourPointsAtImmediateReloads(t *testing.T) {
	c := newBehaveChain(rand.New(rand.NewSource(1)), 100, 399, 0.3)
	r := runLive(t, c, func(h int32) bool { return c.wallet[h] }, false)
	fps, paid := 0, 0
	for h, w := range c.wallet {
		if w {
			fps += c.fps[h]
			paid++
		}
	}
	for _, lv := range []struct {
		name     string
		l        BehaviourLevel
		suspects int
	}{{"blocks", r.Blocks, paid}, {"txs", r.Txs, paid + fps}} {
		s := lv.l.Score(SignalReloadTiming)
		t.Logf("%s: base %.3f (%d of %d); %v", lv.name, lv.l.BaseRate, lv.l.Wallet, lv.l.Candidates, s)
		if s.Suspects != lv.suspects || s.Hits != paid || s.Verdict != VerdictPoints || s.PValue > 1e-6 || s.Recall != 1 {
			t.Errorf("%s: %+v, want %d of %d suspects the wallet's, every wallet item, pointing", lv.name, s, paid, lv.suspects)
		}
		if s.Chance.Hi >= 0.5 || lv.l.BaseRate > 0.5 {
			t.Errorf("%s: chance range up to %.2f, base %.2f: the test has no power", lv.name, s.Chance.Hi, lv.l.BaseRate)
		}
	}
	if paid < 20 || r.Reloads != paid || r.PointingReloads != paid || r.Pointed != paid {
		t.Errorf("reloads %d, pointing %d, pointed %d: want %d (at least 20)", r.Reloads, r.PointingReloads, r.Pointed, paid)
	}
}

// scheduled returns a reload schedule of its own: every 6 to 14 blocks.
func scheduled(rng *rand.Rand, from int32) func(h int32) bool {
	next := from + 6 + int32(rng.Intn(9))
	return func(h int32) bool {
		if h < next {
			return false
		}
		next = h + 6 + int32(rng.Intn(9))
		return true
	}
}

// TestBehaviourScheduledReloadsAreChance: reloads on a schedule of its
// own (every 6 to 14 blocks) whose content grows on the schedule too
// leave the attack at the base rate, in every one of 20 chains (each
// checked at 5 %, Bonferroni-corrected over the chains).
func TestBehaviourScheduledReloadsAreChance(t *testing.T) {
	inside := 0
	for seed := int64(1); seed <= 20; seed++ {
		rng := rand.New(rand.NewSource(seed))
		c := newBehaveChain(rng, 100, 599, 0.3)
		r := runLive(t, c, scheduled(rng, c.from), true)
		s := r.Blocks.Score(SignalReloadTiming)
		if s.Suspects < 20 {
			t.Fatalf("seed %d: %d suspects", seed, s.Suspects)
		}
		if s.Verdict == VerdictChance {
			inside++
		}
		if s.PValue < 0.05/20 {
			t.Errorf("seed %d: %v (p %.2g)", seed, s, s.PValue)
		}
	}
	t.Logf("%d of 20 chains inside the 95 %% range", inside)
}

// TestBehaviourScheduledReloadsThatGrowWithPaymentsPoint: the same
// schedule, but a reload adds elements only when a payment came since
// the last one (the reload tells the peer that one did): the attack
// keeps the reloads that added elements, and their most recent block
// with a transaction is the wallet's more often than a random candidate
// (pooled over 20 chains). A schedule alone does not hide a payment.
func TestBehaviourScheduledReloadsThatGrowWithPaymentsPoint(t *testing.T) {
	var suspects, hits, n, w int
	for seed := int64(1); seed <= 20; seed++ {
		rng := rand.New(rand.NewSource(seed))
		c := newBehaveChain(rng, 100, 599, 0.3)
		r := runLive(t, c, scheduled(rng, c.from), false)
		s := r.Blocks.Score(SignalReloadTiming)
		suspects, hits, n, w = suspects+s.Suspects, hits+s.Hits, n+r.Blocks.Candidates, w+r.Blocks.Wallet
	}
	base := float64(w) / float64(n)
	ci := stats.BinomialInterval(uint64(hits), uint64(suspects), stats.ConfidenceLevel)
	lo, hi := ci.Lo, ci.Hi
	t.Logf("pooled: %d of %d suspects the wallet's, precision %.3f [%.3f, %.3f], base rate %.3f", hits, suspects, float64(hits)/float64(suspects), lo, hi, base)
	if lo <= base {
		t.Errorf("precision %.3f [%.3f, %.3f] not above the base rate %.3f", float64(hits)/float64(suspects), lo, hi, base)
	}
}

// TestBehaviourReloadThatAddsNothingDoesNotPoint: a filter sent again
// (the same filter reloaded, or sent to a new peer) adds no element and
// names nothing; a reload that adds one points at the most recent block
// with a transaction since the peer's previous filter, passing over a
// block that sent none.
func TestBehaviourReloadThatAddsNothingDoesNotPoint(t *testing.T) {
	cl := &behaveClient{t: t, b: NewBehaviour(true), now: time.Unix(1_700_000_000, 0), elems: 20}
	cl.load("p", 10)
	cl.record(transcript.Record{Kind: transcript.KindGetData, Peer: "p", Height: 11, Count: 1})
	cl.b.Sent("p", 11, []SentTx{{ID: txid(11, 0), Wallet: true}})
	cl.load("p", 11) // same elements
	cl.load("q", 11) // same filter, another peer: not a reload
	r, d := cl.b.Detail(0)
	if r.Reloads != 1 || r.PointingReloads != 0 || len(d.SuspectBlocks) != 0 {
		t.Fatalf("reading %+v, detail %+v: want one reload that points at nothing", r, d)
	}
	if d.ReloadList[0].Added != 0 || !d.ReloadList[0].Estimated {
		t.Errorf("reload row %+v: want 0 added", d.ReloadList[0])
	}
	cl.record(transcript.Record{Kind: transcript.KindGetData, Peer: "p", Height: 12, Count: 1})
	cl.b.Sent("p", 12, []SentTx{{ID: txid(12, 0)}})
	cl.record(transcript.Record{Kind: transcript.KindGetData, Peer: "p", Height: 13, Count: 1})
	cl.elems++
	cl.load("p", 13)
	r, d = cl.b.Detail(0)
	if r.PointingReloads != 1 || len(d.SuspectBlocks) != 1 || d.SuspectBlocks[0].Height != 12 {
		t.Fatalf("reading %+v, suspects %+v: want block 12 (block 13 sent nothing, 11 came before the previous filter)", r, d.SuspectBlocks)
	}
	if a := d.ReloadList[1]; !a.Nested || math.Abs(a.Added-1) > 4*a.AddedStdErr+0.5 || a.DelaySeconds <= 0 {
		t.Errorf("reload %+v: want about one element added, after a delay", a)
	}
}

// TestBehaviourRefetchAndRelay: a run asked again points at its first
// block with a transaction; a reload after a mempool relay points at the
// relayed transactions, not at the block before them.
func TestBehaviourRefetchAndRelay(t *testing.T) {
	cl := &behaveClient{t: t, b: NewBehaviour(true), now: time.Unix(1_700_000_000, 0), elems: 20}
	cl.load("p", 100)
	cl.record(transcript.Record{Kind: transcript.KindGetData, Peer: "p", Height: 100, Count: 50})
	for _, h := range []int32{105, 120, 140} {
		cl.b.Sent("p", h, []SentTx{{ID: txid(h, 0), Wallet: h == 120}})
	}
	// Asked again from 110: the first block with a transaction is 120.
	cl.record(transcript.Record{Kind: transcript.KindGetData, Peer: "p", Height: 110, Count: 40})
	cl.record(transcript.Record{Kind: transcript.KindGetData, Peer: "p", Height: 150, Count: 1})
	cl.b.Sent("p", 150, []SentTx{{ID: txid(150, 0)}})
	cl.b.Relayed("p", cl.now, []SentTx{{ID: txid(151, 0), Wallet: true}})
	cl.elems++
	cl.load("p", 150)
	_, d := cl.b.Detail(0)
	if len(d.RefetchList) != 1 || d.RefetchList[0].From != 110 || d.RefetchList[0].Pointer != 120 {
		t.Errorf("refetches %+v: want one from 110 pointing at 120", d.RefetchList)
	}
	if len(d.ReloadList) != 1 || d.ReloadList[0].Pointer != -1 || d.ReloadList[0].PointerTxs != 1 {
		t.Errorf("reloads %+v: want the relay", d.ReloadList)
	}
	var relayed bool
	for _, s := range d.SuspectTxs {
		relayed = relayed || (s.Txid == txid(151, 0).String() && s.Height == -1 && s.Wallet)
	}
	if !relayed || len(d.SuspectBlocks) != 1 || d.SuspectBlocks[0].Height != 120 {
		t.Errorf("suspects %+v %+v: want block 120 and the relayed transaction", d.SuspectBlocks, d.SuspectTxs)
	}
}

// TestBehaviourHostileCount: a getdata record of 2^31-1 blocks costs
// nothing in proportion (the runs are spans).
func TestBehaviourHostileCount(t *testing.T) {
	b := NewBehaviour(false)
	for i := 0; i < 3; i++ {
		r := transcript.Record{Seq: uint64(i), Kind: transcript.KindGetData, Peer: "p", Height: int32(i * 1000), Count: transcript.MaxGetDataCount}
		if err := b.Observe(r); err != nil {
			t.Fatal(err)
		}
	}
	if r := b.Reading(); r.Refetches != 2 {
		t.Errorf("refetches %d, want 2", r.Refetches)
	}
}

// TestSpanSet checks the asked-heights set.
func TestSpanSet(t *testing.T) {
	var s spanSet
	s.add(10, 20)
	s.add(30, 40)
	s.add(21, 29) // adjacent on both sides: one span
	if len(s) != 1 || s[0] != (span{10, 40}) {
		t.Fatalf("%v, want [10 40]", s)
	}
	s.add(50, 50)
	s.add(5, 7)
	for _, c := range []struct {
		from, to int32
		want     int32
		ok       bool
	}{{0, 4, 0, false}, {0, 5, 5, true}, {8, 9, 0, false}, {8, 12, 10, true}, {41, 49, 0, false}, {45, 60, 50, true}, {15, 15, 15, true}} {
		got, ok := s.firstCovered(c.from, c.to)
		if ok != c.ok || (ok && got != c.want) {
			t.Errorf("firstCovered(%d, %d) = %d %v, want %d %v (set %v)", c.from, c.to, got, ok, c.want, c.ok, s)
		}
	}
}

// TestHypergeometric checks the chance range and p-value against hand
// counts.
func TestHypergeometric(t *testing.T) {
	// 10 candidates, 3 the wallet's, 2 drawn: P(0) = 21/45, P(1) = 21/45,
	// P(2) = 3/45.
	h := newHypergeometric(10, 3, 2)
	for x, want := range []float64{21.0 / 45, 21.0 / 45, 3.0 / 45} {
		if got := h.pmf[x-h.lo]; math.Abs(got-want) > 1e-12 {
			t.Errorf("pmf(%d) = %g, want %g", x, got, want)
		}
	}
	if lo, hi := h.central(0.025); lo != 0 || hi != 2 {
		t.Errorf("central = [%d, %d], want [0, 2] (P(2) = 0.067 > 0.025)", lo, hi)
	}
	if p := h.pValue(2); math.Abs(p-6.0/45) > 1e-12 {
		t.Errorf("p(2) = %g, want %g", p, 6.0/45)
	}
	// 1000 candidates, 100 the wallet's, 100 drawn: mean 10, sd 2.85.
	lo, hi := newHypergeometric(1000, 100, 100).central(0.025)
	if lo < 4 || lo > 5 || hi < 15 || hi > 16 {
		t.Errorf("central = [%d, %d], want about 10 ± 1.96 x 2.85", lo, hi)
	}
}

// TestAnalyzeBehaviourRebuild plays today's client on a chain: a batch,
// a reload for a new key after a payment in it and a re-fetch from the
// paying block (twice), then live blocks, one of whose payments comes
// first as a mempool relay and makes the client reload at once. The
// analyzer rebuilds what the peer served from the getdata records and
// the chain, and names the three paying blocks and the three payments.
func TestAnalyzeBehaviourRebuild(t *testing.T) {
	var ch testkit.Chain
	keys := []testkit.Key{testkit.NewKey(60), testkit.NewKey(61), testkit.NewKey(62), testkit.NewKey(63), testkit.NewKey(64)}
	payAt := map[int]testkit.Key{10: keys[0], 25: keys[1], 40: keys[2], 52: keys[3]}
	for h := 0; h < 60; h++ {
		txs := []*wire.MsgTx{testkit.Pay(nil, nil, testkit.NewKey(uint64(300+h))), testkit.Pay(nil, nil, testkit.NewKey(uint64(400+h)))}
		if k, ok := payAt[h]; ok {
			txs = append(txs, testkit.Pay(nil, nil, k, testkit.NewKey(uint64(500+h))))
		}
		ch.Block(txs...)
	}
	filter := func(n int) *bip37.Filter { // the wallet's first n keys
		var cands []element.Candidate
		for _, k := range keys[:n] {
			cands = append(cands, element.Candidate{Forms: [][]byte{k.Hash160}})
		}
		return testkit.MustFilter(t, 8, 1e-6, 5, bip37.UpdateAll, cands...)
	}
	t0 := time.Unix(1_700_000_000, 0)
	var recs []transcript.Record
	add := func(r transcript.Record) {
		r.Seq, r.Peer = uint64(len(recs)), "a"
		r.Time = t0.Add(time.Duration(len(recs)) * time.Second)
		if r.Kind == transcript.KindGetData && r.Count == 0 {
			r.Count = 1
		}
		recs = append(recs, r)
	}
	get := func(h int32, n int64) transcript.Record {
		return transcript.Record{Kind: transcript.KindGetData, Height: h, Count: n}
	}
	add(testkit.LoadRecord(0, "a", 5, filter(2)))
	add(get(6, 25))                                // 6..30
	add(testkit.LoadRecord(0, "a", 25, filter(3))) // key 2 derived after the payment at 25
	add(get(25, 21))                               // 25..45 again from 25
	add(testkit.LoadRecord(0, "a", 40, filter(4)))
	add(get(40, 11)) // 40..50
	add(get(51, 1))  // live: 52's payment reaches the mempool after this
	add(testkit.LoadRecord(0, "a", 51, filter(5)))
	add(get(52, 1))
	truth := make([]element.Candidate, len(keys))
	for i, k := range keys {
		truth[i] = element.Candidate{Forms: [][]byte{k.Hash160}}
	}
	rep, err := AnalyzeBehaviour(context.Background(), recs, ch.Blocks, truth, BehaviourOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Servings != 25+21+11+1+1 || rep.LiveBlocks != 2 || rep.Relays != 1 {
		t.Errorf("servings %d, live blocks %d, relays %d: want 59, 2 (51, 52), 1", rep.Servings, rep.LiveBlocks, rep.Relays)
	}
	if rep.Blocks.Candidates != 4 || rep.Blocks.Wallet != 4 || rep.Txs.Candidates != 4 || rep.Txs.Wallet != 4 {
		t.Errorf("candidates: blocks %+v, txs %+v: want the four payments", rep.Blocks, rep.Txs)
	}
	// The two reloads in the batches are ambiguous (each came after a
	// run of blocks sent together); their re-fetches name the paying
	// blocks; the reload after the relay names the block that
	// confirmed it.
	want := []SuspectBlock{{Height: 25, Signals: []string{SignalRefetchStart}, Wallet: true},
		{Height: 40, Signals: []string{SignalRefetchStart}, Wallet: true},
		{Height: 52, Signals: []string{SignalReloadTiming}, Wallet: true}}
	if !slices.EqualFunc(rep.SuspectBlocks, want, func(a, b SuspectBlock) bool {
		return a.Height == b.Height && a.Wallet == b.Wallet && slices.Equal(a.Signals, b.Signals)
	}) || rep.Ambiguous != 2 || rep.Pointed != 1 {
		t.Errorf("suspect blocks %+v (ambiguous %d, pointed %d), want %+v, 2, 1", rep.SuspectBlocks, rep.Ambiguous, rep.Pointed, want)
	}
	var got []string
	for _, s := range rep.SuspectTxs {
		got = append(got, s.Txid)
	}
	wantTxs := []string{ch.Blocks[25].Transactions[3].TxHash().String(), ch.Blocks[40].Transactions[3].TxHash().String(),
		ch.Blocks[52].Transactions[3].TxHash().String()}
	if !slices.Equal(got, wantTxs) {
		t.Errorf("suspect txs %v, want %v", got, wantTxs)
	}
	if s := rep.Txs.Score(SignalAny); s.Hits != 3 || s.Precision != 1 {
		t.Errorf("txs: %v", s)
	}
	var text strings.Builder
	writeBehaviour(&text, rep)
	for _, want := range []string{"suspect blocks (* the wallet's): 25*, 40*, 52*", "blocks  4           4       1          refetch-start  2",
		"batch", "relay", "59 blocks served, 2 taken as new, 1 transactions rebuilt as relayed; 3 reloads"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text report lacks %q:\n%s", want, text.String())
		}
	}
	// Without the truth the same suspects, no scores.
	rep, err = AnalyzeBehaviour(context.Background(), recs, ch.Blocks, nil, BehaviourOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if s := rep.Blocks.Score(SignalAny); s.Suspects != 3 || s.Verdict != VerdictNoTruth || rep.HasTruth {
		t.Errorf("no truth: %v", s)
	}
	// A transcript without getdata records says so.
	rep, err = AnalyzeBehaviour(context.Background(), transcript.FilterRecords(recs), ch.Blocks, truth, BehaviourOptions{})
	if err != nil || rep.Note == "" || rep.Servings != 0 {
		t.Errorf("no requests: %+v, %v", rep, err)
	}
}

// TestBehaviourRefetchContinues: a re-fetch longer than one getdata
// starts once; a run of new heights after it is no re-fetch.
func TestBehaviourRefetchContinues(t *testing.T) {
	b := NewBehaviour(false)
	for i, r := range [][2]int64{{433, 250}, {683, 250}, {434, 250}, {684, 250}, {934, 99}} {
		if err := b.Observe(transcript.Record{Seq: uint64(i), Kind: transcript.KindGetData, Peer: "p", Height: int32(r[0]), Count: r[1]}); err != nil {
			t.Fatal(err)
		}
	}
	if _, d := b.Detail(0); len(d.RefetchList) != 1 || d.RefetchList[0].From != 434 {
		t.Errorf("re-fetches %+v, want one from 434", d.RefetchList)
	}
}

// TestBehaviourCapsTransactions: sendings past MaxBehaviourTxs are
// counted, not kept (a hostile merkleblock can flag a whole block).
func TestBehaviourCapsTransactions(t *testing.T) {
	b := NewBehaviour(false)
	if err := b.Observe(transcript.Record{Kind: transcript.KindGetData, Peer: "p", Height: 1, Count: 2}); err != nil {
		t.Fatal(err)
	}
	flood := func(h int32, n int) []SentTx {
		out := make([]SentTx, n)
		for i := range out {
			binary.LittleEndian.PutUint32(out[i].ID[:], uint32(h))
			binary.LittleEndian.PutUint32(out[i].ID[4:], uint32(i))
		}
		return out
	}
	b.Sent("p", 1, flood(1, MaxBehaviourTxs-10))
	b.Sent("p", 2, flood(2, 30))
	b.Sent("p", 1, flood(1, 5)) // known: kept
	r := b.Reading()
	if r.Txs.Candidates != MaxBehaviourTxs || r.DroppedTxs != 20 {
		t.Errorf("%d candidates, %d dropped: want %d and 20", r.Txs.Candidates, r.DroppedTxs, MaxBehaviourTxs)
	}
}
