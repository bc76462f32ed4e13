package spv

import (
	"testing"

	"github.com/btcsuite/btcd/btcutil/gcs"
	"github.com/btcsuite/btcd/btcutil/gcs/builder"
	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/wire"
	"github.com/stretchr/testify/require"

	"github.com/bloomwatch/bloomwatch/watch"
)

// TestProtocolChoice checks which peers each protocol accepts and what
// ProtocolAuto chooses for a peer's services.
func TestProtocolChoice(t *testing.T) {
	bloom, cf, both := wire.SFNodeBloom, wire.SFNodeCF, wire.SFNodeBloom|wire.SFNodeCF
	for _, tc := range []struct {
		p               Protocol
		bloom, cf, both bool
		none            bool
	}{
		{ProtocolBIP37, true, false, true, false},
		{ProtocolBIP158, false, true, true, false},
		{ProtocolAuto, true, true, true, false},
	} {
		require.Equal(t, tc.bloom, servesProtocol(tc.p, bloom), tc.p)
		require.Equal(t, tc.cf, servesProtocol(tc.p, cf), tc.p)
		require.Equal(t, tc.both, servesProtocol(tc.p, both), tc.p)
		require.Equal(t, tc.none, servesProtocol(tc.p, wire.SFNodeNetwork), tc.p)
	}
	require.Equal(t, ProtocolBIP158, chooseProtocol(cf, ProtocolBIP37))
	require.Equal(t, ProtocolBIP37, chooseProtocol(bloom, ProtocolBIP158))
	require.Equal(t, ProtocolBIP158, chooseProtocol(both, ProtocolBIP158))
	require.Equal(t, ProtocolBIP37, chooseProtocol(both, ProtocolBIP37))
	for _, s := range []string{"", "bip37", "bip158", "auto"} {
		_, err := ParseProtocol(s)
		require.NoError(t, err, s)
	}
	_, err := ParseProtocol("bip157")
	require.ErrorIs(t, err, ErrBadConfig)
}

// TestElementScripts checks the scripts queried for each element size.
func TestElementScripts(t *testing.T) {
	h20 := make([]byte, 20)
	require.Len(t, elementScripts(h20), 3)
	require.Len(t, elementScripts(make([]byte, 32)), 2)
	require.Len(t, elementScripts(make([]byte, 33)), 1)
	require.Empty(t, elementScripts(make([]byte, 7)))
	var c cfScripts
	s := newElementSet(watch.Elements{Data: [][]byte{h20, h20}})
	require.True(t, c.update(s))
	require.Len(t, c.list, 3, "an element held twice is queried once")
	require.False(t, c.update(s))
}

// TestFilterProblem rebuilds the basic filter of a block from the block
// alone: its own filter passes, one that lacks its scripts (a filter of
// nothing) and one of another block fail.
func TestFilterProblem(t *testing.T) {
	b := chaincfg.MainNetParams.GenesisBlock
	own, err := builder.BuildBasicFilter(b, nil)
	require.NoError(t, err)
	require.NoError(t, filterProblem(b, own))
	empty, err := gcs.FromNBytes(builder.DefaultP, builder.DefaultM, []byte{0})
	require.NoError(t, err)
	require.Error(t, filterProblem(b, empty))
	other, err := builder.BuildBasicFilter(chaincfg.RegressionNetParams.GenesisBlock, nil)
	require.NoError(t, err)
	require.Error(t, filterProblem(b, other))
}
