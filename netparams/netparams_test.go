package netparams

import (
	"testing"

	"github.com/btcsuite/btcd/blockchain"
	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/wire"
	"github.com/stretchr/testify/require"
)

func TestTestNet4Genesis(t *testing.T) {
	const want = "00000000da84f2bafbbc53dee25a72ae507ff4914b867c565be350b0da8bf043"

	// The merkle root is computed from the coinbase we built, and the
	// block hash from the header, so a mistake in either shows here.
	txid := testNet4GenesisCoinbase.TxHash()
	require.True(t, txid.IsEqual(testNet4GenesisMerkleRoot), "coinbase txid %v, want merkle root %v", txid, testNet4GenesisMerkleRoot)
	TestNet4Params := handTestNet4
	got := TestNet4Params.GenesisBlock.BlockHash()
	require.Equal(t, want, got.String(), "testnet4 genesis hash %v, want %v", got, want)
	require.True(t, TestNet4Params.GenesisHash.IsEqual(&got), "GenesisHash %v disagrees with the computed %v", TestNet4Params.GenesisHash, got)
	// Its proof of work is valid against its own limit.
	require.LessOrEqual(t, blockchain.HashToBig(&got).Cmp(blockchain.CompactToBig(TestNet4Params.GenesisBlock.Header.Bits)), 0, "genesis hash above its target")
	require.Equal(t, TestNet4Params.PowLimitBits, blockchain.BigToCompact(TestNet4Params.PowLimit), "pow limit %x does not match bits %08x", TestNet4Params.PowLimit, TestNet4Params.PowLimitBits)
}

func TestLookup(t *testing.T) {
	tests := []struct {
		name     string
		wantName string
		rules    Rules
		port     string
		params   *chaincfg.Params
	}{
		{"mainnet", "mainnet", RulesMainnet, "8333", &chaincfg.MainNetParams},
		{"main", "mainnet", RulesMainnet, "8333", &chaincfg.MainNetParams},
		{" MainNet ", "mainnet", RulesMainnet, "8333", &chaincfg.MainNetParams},
		{"testnet", "testnet3", RulesTestnet3, "18333", &chaincfg.TestNet3Params},
		{"testnet3", "testnet3", RulesTestnet3, "18333", &chaincfg.TestNet3Params},
		{"testnet4", "testnet4", RulesTestnet4, "48333", &chaincfg.TestNet4Params},
		{"signet", "signet", RulesSignet, "38333", &chaincfg.SigNetParams},
		{"regtest", "regtest", RulesRegtest, "18444", &chaincfg.RegressionNetParams},
		{"simnet", "simnet", RulesSimnet, "18555", &chaincfg.SimNetParams},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			n, err := Lookup(tc.name)
			require.NoError(t, err)
			require.Equal(t, tc.wantName, n.Name, "got %+v", n)
			require.Equal(t, tc.rules, n.Rules, "got %+v", n)
			require.Equal(t, tc.port, n.DefaultPort, "got %+v", n)
			require.Same(t, tc.params, n.Params, "got %+v", n)
			require.Equal(t, n.Name, n.Params.Name, "params name %q, network name %q", n.Params.Name, n.Name)
			back, err := ForParams(n.Params)
			require.NoError(t, err, "ForParams: %v", back)
			require.Same(t, n, back, "ForParams: %v, %v", back, err)
			// A copy of the params is recognized too.
			cp := *n.Params
			back, err = ForParams(&cp)
			require.NoError(t, err, "ForParams(copy): %v", back)
			require.Same(t, n, back, "ForParams(copy): %v, %v", back, err)
		})
	}
}

func TestLookupUnknown(t *testing.T) {
	for _, name := range []string{"", "testnet5", "litecoin"} {
		_, err := Lookup(name)
		require.ErrorIs(t, err, ErrUnknownNetwork, "Lookup(%q) = %v, want ErrUnknownNetwork", name, err)
	}
	custom := chaincfg.CustomSignetParams([]byte{0x51}, nil)
	_, err := ForParams(&custom)
	require.ErrorIs(t, err, ErrUnknownNetwork, "custom signet: %v", err)
	_, err = ForParams(nil)
	require.ErrorIs(t, err, ErrUnknownNetwork, "nil: %v", err)
}

func TestNames(t *testing.T) {
	got := Names()
	want := []string{"mainnet", "regtest", "signet", "simnet", "testnet3", "testnet4"}
	require.Len(t, got, len(want), "Names() = %v", got)
	for i := range want {
		require.Equal(t, want[i], got[i], "Names() = %v, want %v", got, want)
	}
}

// TestWalletNetworks checks that every name and alias the wallet's stopgap
// list accepts resolves to the same btcd params here.
func TestWalletNetworks(t *testing.T) {
	wallet := map[string]*chaincfg.Params{
		"mainnet": &chaincfg.MainNetParams, "main": &chaincfg.MainNetParams,
		"testnet3": &chaincfg.TestNet3Params, "testnet": &chaincfg.TestNet3Params,
		"signet": &chaincfg.SigNetParams, "regtest": &chaincfg.RegressionNetParams,
		"simnet": &chaincfg.SimNetParams,
	}
	for name, p := range wallet {
		n, err := Lookup(name)
		require.NoError(t, err, "%s: %v", name, n)
		require.Same(t, p, n.Params, "%s: %v %v", name, n, err)
	}
}

func TestSeedQuery(t *testing.T) {
	tests := []struct {
		seed     chaincfg.DNSSeed
		services wire.ServiceFlag
		want     string
	}{
		{chaincfg.DNSSeed{Host: "seed.bitcoin.sipa.be", HasFiltering: true},
			wire.SFNodeNetwork | wire.SFNodeBloom, "x5.seed.bitcoin.sipa.be"},
		{chaincfg.DNSSeed{Host: "seed.bitcoin.sipa.be", HasFiltering: true},
			wire.SFNodeNetwork | wire.SFNodeBloom | wire.SFNodeWitness, "xd.seed.bitcoin.sipa.be"},
		{chaincfg.DNSSeed{Host: "seed.bitnodes.io", HasFiltering: false},
			wire.SFNodeBloom, "seed.bitnodes.io"},
		{chaincfg.DNSSeed{Host: "seed.bitcoin.sipa.be", HasFiltering: true},
			0, "seed.bitcoin.sipa.be"},
	}
	for _, tc := range tests {
		got := SeedQuery(tc.seed, tc.services)
		require.Equal(t, tc.want, got, "SeedQuery(%v, %v) = %q, want %q", tc.seed, tc.services, got, tc.want)
	}
}

func TestRules(t *testing.T) {
	for _, name := range Names() {
		n, _ := Lookup(name)
		require.Equal(t, name, n.Rules.String(), "%s: rules %v", name, n.Rules)
		require.False(t, n.Rules.MinDifficultyException() != n.Params.ReduceMinDifficulty && n.Rules != RulesRegtest, "%s: min-difficulty exception %v, params %v", name, n.Rules.MinDifficultyException(), n.Params.ReduceMinDifficulty)
		require.Equal(t, n.Params.PoWNoRetargeting, (n.Rules == RulesRegtest), "%s: PoWNoRetargeting %v", name, n.Params.PoWNoRetargeting)
	}
	require.True(t, RulesTestnet4.BIP94(), "BIP94 flag")
	require.False(t, RulesTestnet3.BIP94(), "BIP94 flag")
	require.Equal(t, "Rules(99)", Rules(99).String(), Rules(99).String())
}

// TestParamsConsistent checks every network's genesis hash against its
// genesis block, its pow limit against its bits, and testnet4's encodings.
func TestParamsConsistent(t *testing.T) {
	for _, name := range Names() {
		n, _ := Lookup(name)
		p := n.Params
		got := p.GenesisBlock.BlockHash()
		require.True(t, got.IsEqual(p.GenesisHash), "%s: genesis block hashes to %v, params say %v", name, got, p.GenesisHash)
		bits := p.GenesisBlock.Header.Bits
		require.Equal(t, p.PowLimitBits, bits, "%s: genesis bits %08x, pow limit bits %08x", name, bits, p.PowLimitBits)
		require.LessOrEqual(t, blockchain.CompactToBig(p.PowLimitBits).Cmp(p.PowLimit), 0, "%s: pow limit bits above the limit", name)
		require.Equal(t, p.DefaultPort, n.DefaultPort, "%s: port or seeds differ from params", name)
		require.Len(t, n.Seeds, len(p.DNSSeeds), "%s: port or seeds differ from params", name)
		require.Equal(t, (name == "regtest" || name == "simnet"), (len(n.Seeds) == 0), "%s: %d seeds", name, len(n.Seeds))
	}
	t3, t4 := chaincfg.TestNet3Params, chaincfg.TestNet4Params
	require.Equal(t, "tb", t4.Bech32HRPSegwit, "testnet4 address or key encodings differ from testnet3's")
	require.Equal(t, t3.PubKeyHashAddrID, t4.PubKeyHashAddrID, "testnet4 address or key encodings differ from testnet3's")
	require.Equal(t, t3.ScriptHashAddrID, t4.ScriptHashAddrID, "testnet4 address or key encodings differ from testnet3's")
	require.Equal(t, t3.HDPublicKeyID, t4.HDPublicKeyID, "testnet4 address or key encodings differ from testnet3's")
	require.Equal(t, uint32(1), t4.HDCoinType, "testnet4 address or key encodings differ from testnet3's")
	require.NotEqual(t, t3.Net, t4.Net, "testnet4 shares testnet3's magic or port")
	require.NotEqual(t, t3.DefaultPort, t4.DefaultPort, "testnet4 shares testnet3's magic or port")
	// Modifying the copy did not touch btcd's testnet3.
	require.Equal(t, "testnet3", chaincfg.TestNet3Params.Name, "testnet3 params were modified")
	require.Equal(t, "18333", chaincfg.TestNet3Params.DefaultPort, "testnet3 params were modified")
}
