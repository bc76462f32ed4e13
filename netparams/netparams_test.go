package netparams

import (
	"errors"
	"testing"

	"github.com/btcsuite/btcd/blockchain"
	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/wire"
)

func TestTestNet4Genesis(t *testing.T) {
	const want = "00000000da84f2bafbbc53dee25a72ae507ff4914b867c565be350b0da8bf043"

	// The merkle root is computed from the coinbase we built, and the
	// block hash from the header, so a mistake in either shows here.
	txid := testNet4GenesisCoinbase.TxHash()
	if !txid.IsEqual(testNet4GenesisMerkleRoot) {
		t.Fatalf("coinbase txid %v, want merkle root %v", txid, testNet4GenesisMerkleRoot)
	}
	TestNet4Params := handTestNet4
	got := TestNet4Params.GenesisBlock.BlockHash()
	if got.String() != want {
		t.Fatalf("testnet4 genesis hash %v, want %v", got, want)
	}
	if !TestNet4Params.GenesisHash.IsEqual(&got) {
		t.Fatalf("GenesisHash %v disagrees with the computed %v", TestNet4Params.GenesisHash, got)
	}
	// Its proof of work is valid against its own limit.
	if blockchain.HashToBig(&got).Cmp(blockchain.CompactToBig(TestNet4Params.GenesisBlock.Header.Bits)) > 0 {
		t.Fatal("genesis hash above its target")
	}
	if blockchain.BigToCompact(TestNet4Params.PowLimit) != TestNet4Params.PowLimitBits {
		t.Fatalf("pow limit %x does not match bits %08x", TestNet4Params.PowLimit, TestNet4Params.PowLimitBits)
	}
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
			if err != nil {
				t.Fatal(err)
			}
			if n.Name != tc.wantName || n.Rules != tc.rules || n.DefaultPort != tc.port || n.Params != tc.params {
				t.Fatalf("got %+v", n)
			}
			if n.Params.Name != n.Name {
				t.Fatalf("params name %q, network name %q", n.Params.Name, n.Name)
			}
			back, err := ForParams(n.Params)
			if err != nil || back != n {
				t.Fatalf("ForParams: %v, %v", back, err)
			}
			// A copy of the params is recognized too.
			cp := *n.Params
			back, err = ForParams(&cp)
			if err != nil || back != n {
				t.Fatalf("ForParams(copy): %v, %v", back, err)
			}
		})
	}
}

func TestLookupUnknown(t *testing.T) {
	for _, name := range []string{"", "testnet5", "litecoin"} {
		if _, err := Lookup(name); !errors.Is(err, ErrUnknownNetwork) {
			t.Fatalf("Lookup(%q) = %v, want ErrUnknownNetwork", name, err)
		}
	}
	custom := chaincfg.CustomSignetParams([]byte{0x51}, nil)
	if _, err := ForParams(&custom); !errors.Is(err, ErrUnknownNetwork) {
		t.Fatalf("custom signet: %v", err)
	}
	if _, err := ForParams(nil); !errors.Is(err, ErrUnknownNetwork) {
		t.Fatalf("nil: %v", err)
	}
}

func TestNames(t *testing.T) {
	got := Names()
	want := []string{"mainnet", "regtest", "signet", "simnet", "testnet3", "testnet4"}
	if len(got) != len(want) {
		t.Fatalf("Names() = %v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("Names() = %v, want %v", got, want)
		}
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
		if err != nil || n.Params != p {
			t.Fatalf("%s: %v %v", name, n, err)
		}
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
		if got := SeedQuery(tc.seed, tc.services); got != tc.want {
			t.Errorf("SeedQuery(%v, %v) = %q, want %q", tc.seed, tc.services, got, tc.want)
		}
	}
}

func TestRules(t *testing.T) {
	for _, name := range Names() {
		n, _ := Lookup(name)
		if n.Rules.String() != name {
			t.Errorf("%s: rules %v", name, n.Rules)
		}
		if n.Rules.MinDifficultyException() != n.Params.ReduceMinDifficulty && n.Rules != RulesRegtest {
			t.Errorf("%s: min-difficulty exception %v, params %v", name,
				n.Rules.MinDifficultyException(), n.Params.ReduceMinDifficulty)
		}
		if (n.Rules == RulesRegtest) != n.Params.PoWNoRetargeting {
			t.Errorf("%s: PoWNoRetargeting %v", name, n.Params.PoWNoRetargeting)
		}
	}
	if !RulesTestnet4.BIP94() || RulesTestnet3.BIP94() {
		t.Fatal("BIP94 flag")
	}
	if Rules(99).String() != "Rules(99)" {
		t.Fatal(Rules(99).String())
	}
}

// TestParamsConsistent checks every network's genesis hash against its
// genesis block, its pow limit against its bits, and testnet4's encodings.
func TestParamsConsistent(t *testing.T) {
	for _, name := range Names() {
		n, _ := Lookup(name)
		p := n.Params
		if got := p.GenesisBlock.BlockHash(); !got.IsEqual(p.GenesisHash) {
			t.Errorf("%s: genesis block hashes to %v, params say %v", name, got, p.GenesisHash)
		}
		if got := p.GenesisBlock.Header.Bits; got != p.PowLimitBits {
			t.Errorf("%s: genesis bits %08x, pow limit bits %08x", name, got, p.PowLimitBits)
		}
		if blockchain.CompactToBig(p.PowLimitBits).Cmp(p.PowLimit) > 0 {
			t.Errorf("%s: pow limit bits above the limit", name)
		}
		if n.DefaultPort != p.DefaultPort || len(n.Seeds) != len(p.DNSSeeds) {
			t.Errorf("%s: port or seeds differ from params", name)
		}
		if (len(n.Seeds) == 0) != (name == "regtest" || name == "simnet") {
			t.Errorf("%s: %d seeds", name, len(n.Seeds))
		}
	}
	t3, t4 := chaincfg.TestNet3Params, chaincfg.TestNet4Params
	if t4.Bech32HRPSegwit != "tb" || t4.PubKeyHashAddrID != t3.PubKeyHashAddrID ||
		t4.ScriptHashAddrID != t3.ScriptHashAddrID || t4.HDPublicKeyID != t3.HDPublicKeyID ||
		t4.HDCoinType != 1 {
		t.Error("testnet4 address or key encodings differ from testnet3's")
	}
	if t4.Net == t3.Net || t4.DefaultPort == t3.DefaultPort {
		t.Error("testnet4 shares testnet3's magic or port")
	}
	// Modifying the copy did not touch btcd's testnet3.
	if chaincfg.TestNet3Params.Name != "testnet3" || chaincfg.TestNet3Params.DefaultPort != "18333" {
		t.Error("testnet3 params were modified")
	}
}
