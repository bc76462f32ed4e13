package bcoin

import (
	"fmt"

	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/txscript"
)

// regtest is bcoin 1.0.2's regtest as far as addresses go: the same
// chain as Bitcoin Core's and btcd's regtest (genesis, magic, rules) with
// its own address prefixes (lib/protocol/networks.js: pubkeyhash 0x3c,
// scripthash 0x26, bech32 "rb"; Core and btcd use 0x6f, 0xc4, "bcrt").
// Only Address uses it: everything else, the SPV client and wallet
// included, keeps the regtest parameters, and the harness pays by output
// script, which has no prefix.
var regtest = func() *chaincfg.Params {
	p := chaincfg.RegressionNetParams
	p.Name = "bcoin-regtest"
	p.PubKeyHashAddrID = 0x3c
	p.ScriptHashAddrID = 0x26
	p.Bech32HRPSegwit = "rb"
	return &p
}()

// Address returns bcoin's regtest address of an output script
// (P2PKH, P2SH, P2WPKH or P2WSH), for its RPCs that take an address
// (generatetoaddress). Other scripts have no bcoin 1.0.2 address
// (ErrAddress): it predates taproot's bech32m.
func Address(pkScript []byte) (string, error) {
	class, addrs, _, err := txscript.ExtractPkScriptAddrs(pkScript, &chaincfg.RegressionNetParams)
	if err != nil || len(addrs) != 1 {
		return "", fmt.Errorf("%w: %x", ErrAddress, pkScript)
	}
	var addr btcutil.Address
	switch class {
	case txscript.PubKeyHashTy:
		addr, err = btcutil.NewAddressPubKeyHash(addrs[0].ScriptAddress(), regtest)
	case txscript.ScriptHashTy:
		addr, err = btcutil.NewAddressScriptHashFromHash(addrs[0].ScriptAddress(), regtest)
	case txscript.WitnessV0PubKeyHashTy:
		addr, err = btcutil.NewAddressWitnessPubKeyHash(addrs[0].ScriptAddress(), regtest)
	case txscript.WitnessV0ScriptHashTy:
		addr, err = btcutil.NewAddressWitnessScriptHash(addrs[0].ScriptAddress(), regtest)
	default:
		return "", fmt.Errorf("%w: %s script %x", ErrAddress, class, pkScript)
	}
	if err != nil {
		return "", fmt.Errorf("%w: %x: %w", ErrAddress, pkScript, err)
	}
	return addr.EncodeAddress(), nil
}
