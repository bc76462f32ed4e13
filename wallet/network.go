package wallet

import (
	"fmt"
	"strings"

	"github.com/btcsuite/btcd/chaincfg"
)

// network is one chain a wallet can belong to.
type network struct {
	// name is the canonical name stored in the wallet.
	name   string
	params *chaincfg.Params
}

// knownNetworks maps canonical names and aliases to btcd's parameters.
//
// NOTE: this is the wallet's fallback until spv/netparams lands (it will own
// the list, testnet4 included); resolveNetwork is the only function that
// will change then.
var knownNetworks = map[string]network{
	"mainnet":  {"mainnet", &chaincfg.MainNetParams},
	"main":     {"mainnet", &chaincfg.MainNetParams},
	"testnet3": {"testnet3", &chaincfg.TestNet3Params},
	"testnet":  {"testnet3", &chaincfg.TestNet3Params},
	"signet":   {"signet", &chaincfg.SigNetParams},
	"regtest":  {"regtest", &chaincfg.RegressionNetParams},
	"simnet":   {"simnet", &chaincfg.SimNetParams},
}

// resolveNetwork returns the network called name (case-insensitive).
func resolveNetwork(name string) (network, error) {
	n, ok := knownNetworks[strings.ToLower(strings.TrimSpace(name))]
	if !ok {
		return network{}, inputErr("network", name,
			fmt.Errorf("%w (known: mainnet, testnet3, signet, regtest, simnet)", ErrUnknownNetwork))
	}
	return n, nil
}
