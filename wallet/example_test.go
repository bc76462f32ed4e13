package wallet_test

import (
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/bloomwatch/bloomwatch/wallet"
)

// bip84TestVpub is account 0 of the BIP84 test mnemonic ("abandon" eleven
// times, then "about") on the test networks, m/84'/1'/0', in SLIP-132's
// vpub encoding (P2WPKH). The addresses below were checked against an
// independent derivation with btcutil/hdkeychain from the mnemonic's seed,
// whose m/84'/0'/0' branch gives BIP84's published mainnet vectors.
const bip84TestVpub = "vpub5Y6cjg78GGuNLsaPhmYsiw4gYX3HoQiRBiSwDaBXKUafCt9bNwWQiitDk5VZ5BVxYnQdwoTyXSs2JHRPAgjAvtbBrf8ZhDYe2jWAqvZVnsc"

// ExampleCreate creates a watch-only regtest wallet from a BIP84 account
// key in a temporary directory and lists the addresses it watches: the
// first gap-limit addresses of the receive and change branches.
func ExampleCreate() {
	dir, err := os.MkdirTemp("", "wallet-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	w, err := wallet.Create(filepath.Join(dir, "wallet"), wallet.CreateConfig{
		Network:     "regtest",
		Xpubs:       []string{bip84TestVpub},
		GapExternal: 3,
		GapInternal: 1,
	})
	if err != nil {
		log.Fatal(err)
	}
	defer w.Close()

	addrs, err := w.Addresses()
	if err != nil {
		log.Fatal(err)
	}
	for _, a := range addrs {
		fmt.Println(a.Path, a.Kind, a.Address)
	}
	// Output:
	// m/84'/1'/0'/0/0 p2wpkh bcrt1q6rz28mcfaxtmd6v789l9rrlrusdprr9pz3cppk
	// m/84'/1'/0'/0/1 p2wpkh bcrt1qd7spv5q28348xl4myc8zmh983w5jx32cs707jh
	// m/84'/1'/0'/0/2 p2wpkh bcrt1qxdyjf6h5d6qxap4n2dap97q4j5ps6ua8jkxz0z
	// m/84'/1'/0'/1/0 p2wpkh bcrt1q9u62588spffmq4dzjxsr5l297znf3z6jkgnhsw
}
