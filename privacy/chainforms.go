package privacy

// The forms a chain shows of its candidates, exported for tools that
// build universes from a chain without holding them (the exporter of
// package privacy/btcdrpc).

// OutputCandidates returns the candidates an output script pays, as
// ChainUniverse reads them: the data push of a hash-based script (P2PKH,
// P2WPKH, P2SH, P2WSH, P2TR), and [hash160(key), key] for each key of a
// bare pubkey or multisig script. Other scripts pay no one.
func OutputCandidates(pkScript []byte) []Candidate { return outputCandidates(pkScript) }
