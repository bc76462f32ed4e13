package netparams

import (
	"errors"
	"fmt"
	"math/big"
	"sort"
	"strings"

	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/wire"
)

// ErrUnknownNetwork is returned (wrapped with the name asked for) by Lookup
// and ForParams for a network this package does not know.
var ErrUnknownNetwork = errors.New("netparams: unknown network")

// Rules is the family of difficulty rules a network's headers follow.
type Rules uint8

const (
	// RulesMainnet is Bitcoin's retarget every 2016 blocks, bounded to a
	// factor of 4, from the bits of the last block of the period.
	RulesMainnet Rules = iota

	// RulesTestnet3 adds the 20-minute rule to RulesMainnet: a block whose
	// timestamp is more than twice the target spacing after its parent's
	// may use the proof-of-work limit; other blocks inside a period carry
	// the bits of the last block that did not use that exception. The
	// retarget still starts from the last block's bits (the testnet3
	// "difficulty reset" bug is part of the rules).
	RulesTestnet3

	// RulesTestnet4 is RulesTestnet3 with BIP94: the retarget starts from
	// the bits of the FIRST block of the period (which may never use the
	// exception), and the first block of a period may not have a timestamp
	// more than 600 seconds before its parent's (timewarp fix).
	RulesTestnet4

	// RulesRegtest never retargets: every header carries the proof-of-work
	// limit.
	RulesRegtest

	// RulesSimnet is btcd's simulation network: mainnet retargeting with
	// the 20-minute rule and a trivially low proof-of-work limit.
	RulesSimnet

	// RulesSignet is mainnet retargeting; the block signature (the signet
	// solution in the coinbase) is not part of the header and cannot be
	// checked by a header store.
	RulesSignet
)

// String returns the name of the rule family.
func (r Rules) String() string {
	switch r {
	case RulesMainnet:
		return "mainnet"
	case RulesTestnet3:
		return "testnet3"
	case RulesTestnet4:
		return "testnet4"
	case RulesRegtest:
		return "regtest"
	case RulesSimnet:
		return "simnet"
	case RulesSignet:
		return "signet"
	default:
		return fmt.Sprintf("Rules(%d)", uint8(r))
	}
}

// MinDifficultyException reports whether the rule family allows the
// 20-minute minimum-difficulty exception (params.ReduceMinDifficulty).
func (r Rules) MinDifficultyException() bool {
	return r == RulesTestnet3 || r == RulesTestnet4 || r == RulesSimnet
}

// BIP94 reports whether the rule family enforces BIP94 (testnet4).
func (r Rules) BIP94() bool { return r == RulesTestnet4 }

// MaxTimewarp is BIP94's bound, in seconds, on how far the first block of a
// difficulty period may be timestamped before its parent.
const MaxTimewarp = 600

// Network is one chain bloomwatch can sync.
type Network struct {
	// Name is the canonical name: "mainnet", "testnet3", "testnet4",
	// "signet", "regtest" or "simnet".
	Name string

	// Params are btcd's chain parameters (testnet4's from btcd v0.25.0,
	// BIP94 included; TestBtcdTestNet4MatchesCore compares them with the
	// hand-written ones they replace). Treat them as read-only.
	Params *chaincfg.Params

	// DefaultPort is the peer-to-peer port.
	DefaultPort string

	// Seeds are the DNS seeds (empty for regtest and simnet).
	Seeds []chaincfg.DNSSeed

	// Checkpoints are the known-good (height, hash) pairs, oldest first.
	Checkpoints []chaincfg.Checkpoint

	// Rules is the difficulty rule family.
	Rules Rules

	// MinChainWork is the cumulative work below which a header chain is
	// not taken as the network's (Bitcoin Core's nMinimumChainWork); nil
	// for regtest and simnet. A peer whose chain has less is behind or
	// lying, and the node never reports "synced" on such a chain.
	MinChainWork *big.Int

	// Note says what a header-only client cannot verify on this network,
	// or is empty.
	Note string
}

// String returns the network's name.
func (n *Network) String() string { return n.Name }

// Magic returns the network's wire magic.
func (n *Network) Magic() wire.BitcoinNet { return n.Params.Net }

func fromParams(name string, p *chaincfg.Params, rules Rules, note string) *Network {
	return &Network{
		Name:         name,
		Params:       p,
		DefaultPort:  p.DefaultPort,
		Seeds:        p.DNSSeeds,
		Checkpoints:  p.Checkpoints,
		Rules:        rules,
		MinChainWork: minChainWork[name],
		Note:         note,
	}
}

// minChainWork holds Bitcoin Core's nMinimumChainWork per network, from
// src/kernel/chainparams.cpp of the release of September 2025 (each value
// is the chain work at the block named beside it, the one Core pairs it
// with as defaultAssumeValid).
var minChainWork = map[string]*big.Int{
	"mainnet":  hexWork("dee8e2a309ad8a9820433c68"), // height 912,683
	"testnet3": hexWork("16dd270dd94fac1d7632"),     // height 4,550,000
	"testnet4": hexWork("34a4690fe592dc49c7c"),      // height 91,000
	"signet":   hexWork("67d328e681a"),              // height 267,665
}

// hexWork parses a hex constant (a programming error panics at init).
func hexWork(s string) *big.Int {
	w, ok := new(big.Int).SetString(s, 16)
	if !ok {
		panic("netparams: bad work constant " + s)
	}
	return w
}

// signetNote explains what a header store cannot check on signet.
const signetNote = "signet blocks are valid only with a signature of the " +
	"network's challenge in the coinbase witness; that solution is not in " +
	"the header, so a header-only client trusts its peers for it"

// networks are the known networks by canonical name.
var networks = map[string]*Network{
	"mainnet":  fromParams("mainnet", &chaincfg.MainNetParams, RulesMainnet, ""),
	"testnet3": fromParams("testnet3", &chaincfg.TestNet3Params, RulesTestnet3, ""),
	"testnet4": fromParams("testnet4", &chaincfg.TestNet4Params, RulesTestnet4,
		"no checkpoints: none were verified for this release"),
	"signet":  fromParams("signet", &chaincfg.SigNetParams, RulesSignet, signetNote),
	"regtest": fromParams("regtest", &chaincfg.RegressionNetParams, RulesRegtest, ""),
	"simnet":  fromParams("simnet", &chaincfg.SimNetParams, RulesSimnet, ""),
}

// aliases maps accepted spellings to canonical names.
var aliases = map[string]string{
	"main":       "mainnet",
	"bitcoin":    "mainnet",
	"testnet":    "testnet3",
	"test":       "testnet3",
	"tn3":        "testnet3",
	"tn4":        "testnet4",
	"regression": "regtest",
	"sim":        "simnet",
}

// Lookup returns the network called name (case-insensitive, canonical names
// and aliases such as "main" and "testnet"). The returned value is shared:
// do not modify it.
func Lookup(name string) (*Network, error) {
	key := strings.ToLower(strings.TrimSpace(name))
	if canon, ok := aliases[key]; ok {
		key = canon
	}
	n, ok := networks[key]
	if !ok {
		return nil, fmt.Errorf("%w %q (known: %s)", ErrUnknownNetwork, name,
			strings.Join(Names(), ", "))
	}
	return n, nil
}

// Names returns the canonical network names, sorted.
func Names() []string {
	names := make([]string, 0, len(networks))
	for name := range networks {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

// ForParams returns the network whose parameters are p: the same pointer, or
// parameters with the same wire magic and genesis hash (a copy of btcd's
// params). A custom signet (other challenge, hence other magic) is not
// known.
func ForParams(p *chaincfg.Params) (*Network, error) {
	if p == nil {
		return nil, fmt.Errorf("%w: nil params", ErrUnknownNetwork)
	}
	for _, n := range networks {
		if n.Params == p {
			return n, nil
		}
	}
	for _, n := range networks {
		if n.Params.Net == p.Net && p.GenesisHash != nil &&
			n.Params.GenesisHash.IsEqual(p.GenesisHash) {

			return n, nil
		}
	}
	return nil, fmt.Errorf("%w: params %q (magic %#08x)", ErrUnknownNetwork,
		p.Name, uint32(p.Net))
}

// SeedQuery returns the DNS name to resolve to find peers with the service
// bits services at seed: "x<hex services>.<host>" when the seed filters by
// service bits and services is not zero, otherwise the host itself.
func SeedQuery(seed chaincfg.DNSSeed, services wire.ServiceFlag) string {
	if seed.HasFiltering && services != 0 {
		return fmt.Sprintf("x%x.%s", uint64(services), seed.Host)
	}
	return seed.Host
}
