package main

import (
	"fmt"

	"github.com/bloomwatch/bloomwatch/testnet"

	"github.com/bloomwatch/bloomwatch/bench/clientjob"
)

// truthOf turns testnet's ground truth into what the clients are checked
// against: every wallet txid with its height, and the watched address list
// every client gets. The list is the keyring's receive addresses 0..Addrs-1
// (BIP84 P2WPKH, branch 0) plus the change addresses (branch 1) the chain's
// spends paid, i.e. the used addresses an xpub wallet would know.
func truthOf(t *testnet.Truth, kr *testnet.Keyring, p chainParams) ([]FoundTx, []string, error) {
	var txs []FoundTx
	for _, tx := range t.Txs {
		txs = append(txs, FoundTx{Txid: tx.Txid.String(), Height: tx.Height})
	}
	clientjob.SortTxs(txs)
	var addrs []string
	seen := make(map[string]bool)
	for i := 0; i < p.Addrs; i++ {
		a, err := kr.Address(benchPurpose, 0, uint32(i))
		if err != nil {
			return nil, nil, fmt.Errorf("keyring address %d: %w", i, err)
		}
		addrs = append(addrs, a.EncodeAddress())
		seen[a.EncodeAddress()] = true
	}
	for _, ta := range t.Addresses {
		if seen[ta.Address] {
			continue
		}
		if ta.Branch != 1 {
			return nil, nil, fmt.Errorf("truth pays receive address %s (index %d) beyond --addrs %d", ta.Address, ta.Index, p.Addrs)
		}
		addrs = append(addrs, ta.Address)
		seen[ta.Address] = true
	}
	return txs, addrs, nil
}
