package experiments

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestChainsDeterministic: two chains built from one seed have the same
// block hashes (wire.NewBlockHeader stamps the wall clock; a population's
// headers once changed from run to run, and with them BIP158's filter
// keys: the bip158 experiment differed between two runs of one seed).
func TestChainsDeterministic(t *testing.T) {
	pc := PopulationConfig{Seed: 3, WalletsPerKind: 1, Blocks: 30, Kinds: []WalletKind{KindBloomwatch}}
	a, err := NewPopulation(pc)
	require.NoError(t, err)
	b, _ := NewPopulation(pc)
	cc := ChainConfig{Seed: 3, Blocks: 30, TxsPerBlock: 2, Users: 10, WalletKeys: 2, WalletReceiveEvery: 5, WalletSpendEvery: 10}
	c, err := NewSynthChain(cc)
	require.NoError(t, err)
	d, _ := NewSynthChain(cc)
	for h := range a.Chain {
		require.Equal(t, b.Chain[h].BlockHash(), a.Chain[h].BlockHash(), "population block %d: hashes differ", h)
	}
	for h := range c.Chain {
		require.Equal(t, d.Chain[h].BlockHash(), c.Chain[h].BlockHash(), "synthetic chain block %d: hashes differ", h)
	}
}
