package experiments

import "testing"

// TestChainsDeterministic: two chains built from one seed have the same
// block hashes (wire.NewBlockHeader stamps the wall clock; a population's
// headers once changed from run to run, and with them BIP158's filter
// keys: the bip158 experiment differed between two runs of one seed).
func TestChainsDeterministic(t *testing.T) {
	pc := PopulationConfig{Seed: 3, WalletsPerKind: 1, Blocks: 30, Kinds: []WalletKind{KindBloomwatch}}
	a, err := NewPopulation(pc)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := NewPopulation(pc)
	cc := ChainConfig{Seed: 3, Blocks: 30, TxsPerBlock: 2, Users: 10, WalletKeys: 2, WalletReceiveEvery: 5, WalletSpendEvery: 10}
	c, err := NewSynthChain(cc)
	if err != nil {
		t.Fatal(err)
	}
	d, _ := NewSynthChain(cc)
	for h := range a.Chain {
		if a.Chain[h].BlockHash() != b.Chain[h].BlockHash() {
			t.Fatalf("population block %d: hashes differ", h)
		}
	}
	for h := range c.Chain {
		if c.Chain[h].BlockHash() != d.Chain[h].BlockHash() {
			t.Fatalf("synthetic chain block %d: hashes differ", h)
		}
	}
}
