package wallet

import (
	"errors"
	"fmt"
	"strings"

	"github.com/btcsuite/btcd/chaincfg"

	"github.com/bloomwatch/bloomwatch/netparams"
)

// network is one chain a wallet can belong to.
type network struct {
	// name is the canonical name stored in the wallet.
	name   string
	params *chaincfg.Params
}

// resolveNetwork returns the network called name (case-insensitive, with
// the aliases netparams accepts: testnet -> testnet3, main -> mainnet).
// netparams owns the list, so the wallet and the light node always
// agree on what a network is (testnet4 included).
func resolveNetwork(name string) (network, error) {
	n, err := netparams.Lookup(strings.ToLower(strings.TrimSpace(name)))
	if err != nil {
		if errors.Is(err, netparams.ErrUnknownNetwork) {
			return network{}, inputErr("network", name,
				fmt.Errorf("%w (known: %s)", ErrUnknownNetwork, strings.Join(netparams.Names(), ", ")))
		}
		return network{}, inputErr("network", name, err)
	}
	return network{name: n.Name, params: n.Params}, nil
}
