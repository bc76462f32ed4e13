package privacy

import (
	"testing"
	"time"

	"github.com/bloomwatch/bloomwatch/privacy/behaviour"
	"github.com/bloomwatch/bloomwatch/privacy/internal/behavetest"
	"github.com/bloomwatch/bloomwatch/transcript"
	"github.com/stretchr/testify/require"
)

// TestMeterBehaviour: the meter runs the behaviour attack on what the
// client sent and received, with its own verdicts as the truth: nothing
// before a request; a reload right after a payment names it, to the
// peer that served it and to the one that answered its omission check;
// sendings alone refresh the reading only in batches, Settle at once.
func TestMeterBehaviour(t *testing.T) {
	m := NewMeter(MeterConfig{})
	cl := &behavetest.Client{T: t, Attack: behaviour.NewAttack(true), Now: time.Unix(1_700_000_000, 0), Elems: 20}
	rec := func(r transcript.Record) {
		t.Helper()
		cl.Seq++
		cl.Now = cl.Now.Add(50 * time.Millisecond)
		r.Seq, r.Time = cl.Seq, cl.Now
		_, err := m.Observe(r)
		require.NoError(t, err)
	}
	load := func(peer string, h int32) {
		rec(transcript.Record{Kind: transcript.KindFilterLoad, Peer: peer, Height: h, Filter: cl.Filter()})
	}
	load("a", 10)
	load("b", 10)
	before := m.Current()
	require.Nil(t, before.Behaviour, "behaviour %+v before any request", before.Behaviour)
	// As the session feeds it: each merkleblock's matches unjudged
	// (a false positive in every block, the payment in 15), then the
	// watcher's verdict on the payment; b answers omission checks.
	served := func(peer string, h int32) {
		m.ObserveSent(cl.Now, peer, h, behaviour.SentTx{ID: behavetest.TxID(h, 1)})
		if h == 15 {
			m.ObserveSent(cl.Now, peer, h, behaviour.SentTx{ID: behavetest.TxID(h, 0)})
		}
	}
	for h := int32(11); h <= 20; h++ {
		rec(transcript.Record{Kind: transcript.KindGetData, Peer: "a", Height: h, Count: 1})
		served("a", h)
		if h == 15 {
			m.ObserveSent(cl.Now, "a", h, behaviour.SentTx{ID: behavetest.TxID(h, 0), Wallet: true})
		}
		rec(transcript.Record{Kind: transcript.KindGetData, Peer: "b", Height: h, Count: 1, Reason: transcript.ReasonCheck})
		served("b", h)
		if h == 15 { // the payment needs a key: both peers reloaded
			cl.Elems++
			load("a", h)
			load("b", h)
		}
	}
	r := m.Settle().Behaviour
	require.NotNil(t, r, "behaviour %+v: want two reloads, each pointing (b at the block it checked)", r)
	require.Equal(t, 2, r.Reloads, "behaviour %+v: want two reloads, each pointing (b at the block it checked)", r)
	require.Equal(t, 2, r.Pointed, "behaviour %+v: want two reloads, each pointing (b at the block it checked)", r)
	s := r.Blocks.Score(behaviour.SignalReloadTiming)
	require.Equal(t, 1, s.Suspects, "blocks %+v: want block 15 named among 10 candidates", r.Blocks)
	require.Equal(t, 1, s.Hits, "blocks %+v: want block 15 named among 10 candidates", r.Blocks)
	require.Equal(t, 10, r.Blocks.Candidates, "blocks %+v: want block 15 named among 10 candidates", r.Blocks)
	require.Equal(t, 1, r.Blocks.Wallet, "blocks %+v: want block 15 named among 10 candidates", r.Blocks)
	// Sendings alone: the cached reading stands until a batch or Settle.
	m.ObserveSent(cl.Now, "a", 21, behaviour.SentTx{ID: behavetest.TxID(21, 1)})
	got := m.Current().Behaviour.Blocks.Candidates
	require.Equal(t, 10, got, "candidates %d after one sending: want the cached 10", got)
	got = m.Settle().Behaviour.Blocks.Candidates
	require.Equal(t, 11, got, "candidates %d after Settle: want 11", got)
	// A relayed payment and a reload at once: the relay is named.
	m.ObserveSent(cl.Now, "a", -1, behaviour.SentTx{ID: behavetest.TxID(22, 0), Wallet: true})
	cl.Elems++
	load("a", 21)
	s = m.Current().Behaviour.Txs.Score(behaviour.SignalReloadTiming)
	require.Equal(t, 3, s.Suspects, "txs %+v: want the two payments and block 15's false positive", s)
	require.Equal(t, 2, s.Hits, "txs %+v: want the two payments and block 15's false positive", s)
}
