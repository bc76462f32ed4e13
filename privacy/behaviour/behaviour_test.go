package behaviour_test

import (
	"context"
	"encoding/binary"
	"math/rand"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bloomwatch/bloomwatch/bip37"
	"github.com/bloomwatch/bloomwatch/privacy/behaviour"
	"github.com/bloomwatch/bloomwatch/privacy/element"
	"github.com/bloomwatch/bloomwatch/privacy/internal/behavetest"
	"github.com/bloomwatch/bloomwatch/privacy/internal/testkit"
	"github.com/bloomwatch/bloomwatch/privacy/stats"
	"github.com/bloomwatch/bloomwatch/transcript"
	"github.com/btcsuite/btcd/wire"
	"github.com/stretchr/testify/require"
)

// TestBehaviourPointsAtImmediateReloads: a client that reloads right
// after each block holding its payment (today's bloomwatch) is named by
// the reload timing: every suspect block is the wallet's, and every
// wallet transaction is among the suspect transactions (beside the
// false positives of the same blocks), far above the base rate.
func TestBehaviourPointsAtImmediateReloads(t *testing.T) {
	c := behavetest.NewChain(rand.New(rand.NewSource(1)), 100, 399, 0.3)
	r := behavetest.RunLive(t, c, func(h int32) bool { return c.Wallet[h] }, false)
	fps, paid := 0, 0
	for h, w := range c.Wallet {
		if w {
			fps += c.FPs[h]
			paid++
		}
	}
	for _, lv := range []struct {
		name     string
		l        behaviour.Level
		suspects int
	}{{"blocks", r.Blocks, paid}, {"txs", r.Txs, paid + fps}} {
		s := lv.l.Score(behaviour.SignalReloadTiming)
		t.Logf("%s: base %.3f (%d of %d); %v", lv.name, lv.l.BaseRate, lv.l.Wallet, lv.l.Candidates, s)
		require.Equal(t, lv.suspects, s.Suspects, "%s: %+v, want %d of %d suspects the wallet's, every wallet item, pointing", lv.name, s, paid, lv.suspects)
		require.Equal(t, paid, s.Hits, "%s: %+v, want %d of %d suspects the wallet's, every wallet item, pointing", lv.name, s, paid, lv.suspects)
		require.Equal(t, behaviour.VerdictPoints, s.Verdict, "%s: %+v, want %d of %d suspects the wallet's, every wallet item, pointing", lv.name, s, paid, lv.suspects)
		require.LessOrEqual(t, s.PValue, 1e-6, "%s: %+v, want %d of %d suspects the wallet's, every wallet item, pointing", lv.name, s, paid, lv.suspects)
		require.Equal(t, float64(1), s.Recall, "%s: %+v, want %d of %d suspects the wallet's, every wallet item, pointing", lv.name, s, paid, lv.suspects)
		require.Less(t, s.Chance.Hi, 0.5, "%s: chance range up to %.2f, base %.2f: the test has no power", lv.name, s.Chance.Hi, lv.l.BaseRate)
		require.LessOrEqual(t, lv.l.BaseRate, 0.5, "%s: chance range up to %.2f, base %.2f: the test has no power", lv.name, s.Chance.Hi, lv.l.BaseRate)
	}
	require.GreaterOrEqual(t, paid, 20, "reloads %d, pointing %d, pointed %d: want %d (at least 20)", r.Reloads, r.PointingReloads, r.Pointed, paid)
	require.Equal(t, paid, r.Reloads, "reloads %d, pointing %d, pointed %d: want %d (at least 20)", r.Reloads, r.PointingReloads, r.Pointed, paid)
	require.Equal(t, paid, r.PointingReloads, "reloads %d, pointing %d, pointed %d: want %d (at least 20)", r.Reloads, r.PointingReloads, r.Pointed, paid)
	require.Equal(t, paid, r.Pointed, "reloads %d, pointing %d, pointed %d: want %d (at least 20)", r.Reloads, r.PointingReloads, r.Pointed, paid)
}

// TestBehaviourScheduledReloadsAreChance: reloads on a schedule of its
// own (every 6 to 14 blocks) whose content grows on the schedule too
// leave the attack at the base rate, in every one of 20 chains (each
// checked at 5 %, Bonferroni-corrected over the chains).
func TestBehaviourScheduledReloadsAreChance(t *testing.T) {
	inside := 0
	for seed := int64(1); seed <= 20; seed++ {
		rng := rand.New(rand.NewSource(seed))
		c := behavetest.NewChain(rng, 100, 599, 0.3)
		r := behavetest.RunLive(t, c, behavetest.Scheduled(rng, c.From), true)
		s := r.Blocks.Score(behaviour.SignalReloadTiming)
		require.GreaterOrEqual(t, s.Suspects, 20, "seed %d: %d suspects", seed, s.Suspects)
		if s.Verdict == behaviour.VerdictChance {
			inside++
		}
		require.GreaterOrEqual(t, s.PValue, 0.05/20, "seed %d: %v (p %.2g)", seed, s, s.PValue)
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
		c := behavetest.NewChain(rng, 100, 599, 0.3)
		r := behavetest.RunLive(t, c, behavetest.Scheduled(rng, c.From), false)
		s := r.Blocks.Score(behaviour.SignalReloadTiming)
		suspects, hits, n, w = suspects+s.Suspects, hits+s.Hits, n+r.Blocks.Candidates, w+r.Blocks.Wallet
	}
	base := float64(w) / float64(n)
	ci := stats.BinomialInterval(uint64(hits), uint64(suspects), stats.ConfidenceLevel)
	lo, hi := ci.Lo, ci.Hi
	t.Logf("pooled: %d of %d suspects the wallet's, precision %.3f [%.3f, %.3f], base rate %.3f", hits, suspects, float64(hits)/float64(suspects), lo, hi, base)
	require.Greater(t, lo, base, "precision %.3f [%.3f, %.3f] not above the base rate %.3f", float64(hits)/float64(suspects), lo, hi, base)
}

// TestBehaviourReloadThatAddsNothingDoesNotPoint: a filter sent again
// (the same filter reloaded, or sent to a new peer) adds no element and
// names nothing; a reload that adds one points at the most recent block
// with a transaction since the peer's previous filter, passing over a
// block that sent none.
func TestBehaviourReloadThatAddsNothingDoesNotPoint(t *testing.T) {
	cl := &behavetest.Client{T: t, Attack: behaviour.NewAttack(true), Now: time.Unix(1_700_000_000, 0), Elems: 20}
	cl.Load("p", 10)
	cl.Record(transcript.Record{Kind: transcript.KindGetData, Peer: "p", Height: 11, Count: 1})
	cl.Attack.Sent("p", 11, []behaviour.SentTx{{ID: behavetest.TxID(11, 0), Wallet: true}})
	cl.Load("p", 11) // same elements
	cl.Load("q", 11) // same filter, another peer: not a reload
	r, d := cl.Attack.Detail(0)
	require.Equal(t, 1, r.Reloads, "reading %+v, detail %+v: want one reload that points at nothing", r, d)
	require.Equal(t, 0, r.PointingReloads, "reading %+v, detail %+v: want one reload that points at nothing", r, d)
	require.Len(t, d.SuspectBlocks, 0, "reading %+v, detail %+v: want one reload that points at nothing", r, d)
	require.Equal(t, float64(0), d.ReloadList[0].Added, "reload row %+v: want 0 added", d.ReloadList[0])
	require.True(t, d.ReloadList[0].Estimated, "reload row %+v: want 0 added", d.ReloadList[0])
	cl.Record(transcript.Record{Kind: transcript.KindGetData, Peer: "p", Height: 12, Count: 1})
	cl.Attack.Sent("p", 12, []behaviour.SentTx{{ID: behavetest.TxID(12, 0)}})
	cl.Record(transcript.Record{Kind: transcript.KindGetData, Peer: "p", Height: 13, Count: 1})
	cl.Elems++
	cl.Load("p", 13)
	r, d = cl.Attack.Detail(0)
	require.Equal(t, 1, r.PointingReloads, "reading %+v, suspects %+v: want block 12 (block 13 sent nothing, 11 came before the previous filter)", r, d.SuspectBlocks)
	require.Len(t, d.SuspectBlocks, 1, "reading %+v, suspects %+v: want block 12 (block 13 sent nothing, 11 came before the previous filter)", r, d.SuspectBlocks)
	require.Equal(t, int32(12), d.SuspectBlocks[0].Height, "reading %+v, suspects %+v: want block 12 (block 13 sent nothing, 11 came before the previous filter)", r, d.SuspectBlocks)
	a := d.ReloadList[1]
	require.True(t, a.Nested, "reload %+v: want about one element added, after a delay", a)
	require.InDelta(t, 1, a.Added, 4*a.AddedStdErr+0.5, "reload %+v: want about one element added, after a delay", a)
	require.Greater(t, a.DelaySeconds, float64(0), "reload %+v: want about one element added, after a delay", a)
}

// TestBehaviourRefetchAndRelay: a run asked again points at its first
// block with a transaction; a reload after a mempool relay points at the
// relayed transactions, not at the block before them.
func TestBehaviourRefetchAndRelay(t *testing.T) {
	cl := &behavetest.Client{T: t, Attack: behaviour.NewAttack(true), Now: time.Unix(1_700_000_000, 0), Elems: 20}
	cl.Load("p", 100)
	cl.Record(transcript.Record{Kind: transcript.KindGetData, Peer: "p", Height: 100, Count: 50})
	for _, h := range []int32{105, 120, 140} {
		cl.Attack.Sent("p", h, []behaviour.SentTx{{ID: behavetest.TxID(h, 0), Wallet: h == 120}})
	}
	// Asked again from 110: the first block with a transaction is 120.
	cl.Record(transcript.Record{Kind: transcript.KindGetData, Peer: "p", Height: 110, Count: 40})
	cl.Record(transcript.Record{Kind: transcript.KindGetData, Peer: "p", Height: 150, Count: 1})
	cl.Attack.Sent("p", 150, []behaviour.SentTx{{ID: behavetest.TxID(150, 0)}})
	cl.Attack.Relayed("p", cl.Now, []behaviour.SentTx{{ID: behavetest.TxID(151, 0), Wallet: true}})
	cl.Elems++
	cl.Load("p", 150)
	_, d := cl.Attack.Detail(0)
	require.Len(t, d.RefetchList, 1, "refetches %+v: want one from 110 pointing at 120", d.RefetchList)
	require.Equal(t, int32(110), d.RefetchList[0].From, "refetches %+v: want one from 110 pointing at 120", d.RefetchList)
	require.Equal(t, int32(120), d.RefetchList[0].Pointer, "refetches %+v: want one from 110 pointing at 120", d.RefetchList)
	require.Len(t, d.ReloadList, 1, "reloads %+v: want the relay", d.ReloadList)
	require.Equal(t, int32(-1), d.ReloadList[0].Pointer, "reloads %+v: want the relay", d.ReloadList)
	require.Equal(t, 1, d.ReloadList[0].PointerTxs, "reloads %+v: want the relay", d.ReloadList)
	var relayed bool
	for _, s := range d.SuspectTxs {
		relayed = relayed || (s.Txid == behavetest.TxID(151, 0).String() && s.Height == -1 && s.Wallet)
	}
	require.True(t, relayed, "suspects %+v %+v: want block 120 and the relayed transaction", d.SuspectBlocks, d.SuspectTxs)
	require.Len(t, d.SuspectBlocks, 1, "suspects %+v %+v: want block 120 and the relayed transaction", d.SuspectBlocks, d.SuspectTxs)
	require.Equal(t, int32(120), d.SuspectBlocks[0].Height, "suspects %+v %+v: want block 120 and the relayed transaction", d.SuspectBlocks, d.SuspectTxs)
}

// TestBehaviourHostileCount: a getdata record of 2^31-1 blocks costs
// nothing in proportion (the runs are spans).
func TestBehaviourHostileCount(t *testing.T) {
	b := behaviour.NewAttack(false)
	for i := 0; i < 3; i++ {
		r := transcript.Record{Seq: uint64(i), Kind: transcript.KindGetData, Peer: "p", Height: int32(i * 1000), Count: transcript.MaxGetDataCount}
		require.NoError(t, b.Observe(r))
	}
	r := b.Reading()
	require.Equal(t, 2, r.Refetches, "refetches %d, want 2", r.Refetches)
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
	rep, err := behaviour.Analyze(context.Background(), recs, ch.Blocks, truth, behaviour.Options{})
	require.NoError(t, err)
	require.Equal(t, int64(25+21+11+1+1), rep.Servings, "servings %d, live blocks %d, relays %d: want 59, 2 (51, 52), 1", rep.Servings, rep.LiveBlocks, rep.Relays)
	require.Equal(t, 2, rep.LiveBlocks, "servings %d, live blocks %d, relays %d: want 59, 2 (51, 52), 1", rep.Servings, rep.LiveBlocks, rep.Relays)
	require.Equal(t, 1, rep.Relays, "servings %d, live blocks %d, relays %d: want 59, 2 (51, 52), 1", rep.Servings, rep.LiveBlocks, rep.Relays)
	require.Equal(t, 4, rep.Blocks.Candidates, "candidates: blocks %+v, txs %+v: want the four payments", rep.Blocks, rep.Txs)
	require.Equal(t, 4, rep.Blocks.Wallet, "candidates: blocks %+v, txs %+v: want the four payments", rep.Blocks, rep.Txs)
	require.Equal(t, 4, rep.Txs.Candidates, "candidates: blocks %+v, txs %+v: want the four payments", rep.Blocks, rep.Txs)
	require.Equal(t, 4, rep.Txs.Wallet, "candidates: blocks %+v, txs %+v: want the four payments", rep.Blocks, rep.Txs)
	// The two reloads in the batches are ambiguous (each came after a
	// run of blocks sent together); their re-fetches name the paying
	// blocks; the reload after the relay names the block that
	// confirmed it.
	want := []behaviour.SuspectBlock{{Height: 25, Signals: []string{behaviour.SignalRefetchStart}, Wallet: true},
		{Height: 40, Signals: []string{behaviour.SignalRefetchStart}, Wallet: true},
		{Height: 52, Signals: []string{behaviour.SignalReloadTiming}, Wallet: true}}
	require.True(t, slices.EqualFunc(rep.SuspectBlocks, want, func(a, b behaviour.SuspectBlock) bool {
		return a.Height == b.Height && a.Wallet == b.Wallet && slices.Equal(a.Signals, b.Signals)
	}), "suspect blocks %+v (ambiguous %d, pointed %d), want %+v, 2, 1", rep.SuspectBlocks, rep.Ambiguous, rep.Pointed, want)
	require.Equal(t, 2, rep.Ambiguous, "suspect blocks %+v (ambiguous %d, pointed %d), want %+v, 2, 1", rep.SuspectBlocks, rep.Ambiguous, rep.Pointed, want)
	require.Equal(t, 1, rep.Pointed, "suspect blocks %+v (ambiguous %d, pointed %d), want %+v, 2, 1", rep.SuspectBlocks, rep.Ambiguous, rep.Pointed, want)
	var got []string
	for _, s := range rep.SuspectTxs {
		got = append(got, s.Txid)
	}
	wantTxs := []string{ch.Blocks[25].Transactions[3].TxHash().String(), ch.Blocks[40].Transactions[3].TxHash().String(),
		ch.Blocks[52].Transactions[3].TxHash().String()}
	require.True(t, slices.Equal(got, wantTxs), "suspect txs %v, want %v", got, wantTxs)
	s := rep.Txs.Score(behaviour.SignalAny)
	require.Equal(t, 3, s.Hits, "txs: %v", s)
	require.Equal(t, float64(1), s.Precision, "txs: %v", s)
	var text strings.Builder
	behaviour.WriteReport(&text, rep)
	for _, want := range []string{"suspect blocks (* the wallet's): 25*, 40*, 52*", "blocks  4           4       1          refetch-start  2",
		"batch", "relay", "59 blocks served, 2 taken as new, 1 transactions rebuilt as relayed; 3 reloads"} {
		require.Contains(t, text.String(), want, "text report lacks %q:\n%s", want, text.String())
	}
	// Without the truth the same suspects, no scores.
	rep, err = behaviour.Analyze(context.Background(), recs, ch.Blocks, nil, behaviour.Options{})
	require.NoError(t, err)
	s = rep.Blocks.Score(behaviour.SignalAny)
	require.Equal(t, 3, s.Suspects, "no truth: %v", s)
	require.Equal(t, behaviour.VerdictNoTruth, s.Verdict, "no truth: %v", s)
	require.False(t, rep.HasTruth, "no truth: %v", s)
	// A transcript without getdata records says so.
	rep, err = behaviour.Analyze(context.Background(), transcript.FilterRecords(recs), ch.Blocks, truth, behaviour.Options{})
	require.NoError(t, err, "no requests: %+v", rep)
	require.NotEqual(t, "", rep.Note, "no requests: %+v, %v", rep, err)
	require.Equal(t, int64(0), rep.Servings, "no requests: %+v, %v", rep, err)
}

// TestBehaviourRefetchContinues: a re-fetch longer than one getdata
// starts once; a run of new heights after it is no re-fetch.
func TestBehaviourRefetchContinues(t *testing.T) {
	b := behaviour.NewAttack(false)
	for i, r := range [][2]int64{{433, 250}, {683, 250}, {434, 250}, {684, 250}, {934, 99}} {
		require.NoError(t, b.Observe(transcript.Record{Seq: uint64(i), Kind: transcript.KindGetData, Peer: "p", Height: int32(r[0]), Count: r[1]}))
	}
	_, d := b.Detail(0)
	require.Len(t, d.RefetchList, 1, "re-fetches %+v, want one from 434", d.RefetchList)
	require.Equal(t, int32(434), d.RefetchList[0].From, "re-fetches %+v, want one from 434", d.RefetchList)
}

// TestBehaviourCapsTransactions: sendings past MaxTxs are
// counted, not kept (a hostile merkleblock can flag a whole block).
func TestBehaviourCapsTransactions(t *testing.T) {
	b := behaviour.NewAttack(false)
	require.NoError(t, b.Observe(transcript.Record{Kind: transcript.KindGetData, Peer: "p", Height: 1, Count: 2}))
	flood := func(h int32, n int) []behaviour.SentTx {
		out := make([]behaviour.SentTx, n)
		for i := range out {
			binary.LittleEndian.PutUint32(out[i].ID[:], uint32(h))
			binary.LittleEndian.PutUint32(out[i].ID[4:], uint32(i))
		}
		return out
	}
	b.Sent("p", 1, flood(1, behaviour.MaxTxs-10))
	b.Sent("p", 2, flood(2, 30))
	b.Sent("p", 1, flood(1, 5)) // known: kept
	r := b.Reading()
	require.Equal(t, behaviour.MaxTxs, r.Txs.Candidates, "%d candidates, %d dropped: want %d and 20", r.Txs.Candidates, r.DroppedTxs, behaviour.MaxTxs)
	require.Equal(t, 20, r.DroppedTxs, "%d candidates, %d dropped: want %d and 20", r.Txs.Candidates, r.DroppedTxs, behaviour.MaxTxs)
}
