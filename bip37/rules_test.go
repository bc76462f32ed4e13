package bip37

import (
	"bytes"
	"testing"

	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/btcutil/bloom"
	"github.com/btcsuite/btcd/wire"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

// TestPropertyBtcdRulesMatchBtcutil: under RulesBtcd a filter matches and
// updates exactly as btcd's btcutil/bloom on every generated transaction,
// empty pushes, empty elements and scripts that fail to parse included
// (UPDATE_NONE and UPDATE_ALL; P2PUBKEY_ONLY's classification differs:
// TestP2PubKeyOnlyDiffersFromBtcutil).
func TestPropertyBtcdRulesMatchBtcutil(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		g := txGen{pool: drawPool(t, true)}
		size := rapid.IntRange(1, 64).Draw(t, "size")
		k := rapid.Uint32Range(1, 20).Draw(t, "k")
		flags := rapid.SampledFrom([]UpdateFlag{UpdateNone, UpdateAll}).Draw(t, "flags")
		f, err := NewFilterFromBits(make([]byte, size), k, rapid.Uint32().Draw(t, "tweak"), flags)
		require.NoError(t, err)
		f.SetRules(RulesBtcd)
		for _, e := range g.pool[:rapid.IntRange(0, len(g.pool)).Draw(t, "watchedCount")] {
			f.Add(e)
		}
		bf := bloom.LoadFilter(f.MsgFilterLoad())
		runTxSequence(t, g, func(tx *wire.MsgTx) {
			// Explain answers as the relevance test does (before the
			// update).
			_, explained := f.Explain(tx)
			got := f.MatchTxAndUpdate(tx)
			require.Equal(t, explained, got, "Explain %v, MatchTxAndUpdate %v", explained, got)
			want := bf.MatchTxAndUpdate(btcutil.NewTx(tx))
			require.Equal(t, want, got, "MatchTxAndUpdate %v, btcutil %v", got, want)
			require.True(t, bytes.Equal(f.Bits(), bf.MsgFilterLoad().Filter), "filters diverged after the update")
		})
	})
}

// TestBtcdRulesMatchEmptyPushes: a filter whose bits cover the empty
// element matches every P2WPKH output under btcd's rules (and inserts its
// outpoint under UPDATE_ALL), under Core's none; Explain names the empty
// push; clones keep the rules; RulesFor reads btcd's user agent.
func TestBtcdRulesMatchEmptyPushes(t *testing.T) {
	f, err := NewFilter(10, 0.01, 7, UpdateAll)
	require.NoError(t, err)
	f.Add(nil)
	tx := wire.NewMsgTx(wire.TxVersion)
	tx.AddTxIn(wire.NewTxIn(&wire.OutPoint{Index: 1}, nil, nil))
	tx.AddTxOut(wire.NewTxOut(1, append([]byte{0x00, 0x14}, bytes.Repeat([]byte{0x42}, 20)...)))
	require.False(t, f.Clone().MatchTxAndUpdate(tx), "Core's rules matched an empty push")
	b := f.Clone()
	b.SetRules(RulesBtcd)
	c := b.Clone()
	require.Equal(t, RulesBtcd, c.Rules(), "a clone lost the rules")
	m, ok := b.Explain(tx)
	require.True(t, ok, "explain %+v %v", m, ok)
	require.Equal(t, MatchOutput, m.Kind, "explain %+v %v", m, ok)
	require.Equal(t, 0, len(m.Element), "explain %+v %v", m, ok)
	require.True(t, b.MatchTxAndUpdate(tx), "btcd's rules: no match, or the outpoint not inserted")
	require.True(t, b.MatchesOutPoint(&wire.OutPoint{Hash: tx.TxHash(), Index: 0}), "btcd's rules: no match, or the outpoint not inserted")
	for agent, want := range map[string]Rules{
		"/btcwire:0.5.0/btcd:0.24.2/": RulesBtcd,
		"/Satoshi:27.0.0/":            RulesCore,
		"/bcoin:1.0.2/":               RulesCore,
		"":                            RulesCore,
	} {
		got := RulesFor(agent)
		require.Equal(t, want, got, "RulesFor(%q) = %v, want %v", agent, got, want)
	}
}
