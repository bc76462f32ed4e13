package privacy

import "github.com/btcsuite/btcd/wire"

// The forms a chain shows of its candidates, exported for tools that
// build universes from a chain without holding them (the exporter of
// package privacy/btcdrpc).

// OutputCandidates returns the candidates an output script pays, as
// ChainUniverse reads them: the data push of a hash-based script (P2PKH,
// P2WPKH, P2SH, P2WSH, P2TR), and [hash160(key), key] for each key of a
// bare pubkey or multisig script. Other scripts pay no one.
func OutputCandidates(pkScript []byte) []Candidate { return outputCandidates(pkScript) }

// RevealedPubKey returns the public key an input reveals when it spends a
// key-hash output (the last push of a P2PKH scriptSig, the second item of
// a P2WPKH witness), or nil.
func RevealedPubKey(in *wire.TxIn) []byte { return revealedPubKey(in) }
