// Package bip37 implements BIP37 connection bloom filtering exactly as
// Bitcoin Core's CBloomFilter and CPartialMerkleTree do: filter sizing with
// Core's integer and floating-point rounding, MurmurHash3 bit selection,
// the server-side relevance test that decides which transactions a full node
// relays to a light client (including the BLOOM_UPDATE_* outpoint updates),
// the filterload wire format, and partial merkle tree construction and
// verification with every check of CPartialMerkleTree::ExtractMatches.
//
// The package is pure and synchronous. Where Bitcoin Core and btcd's
// btcutil/bloom disagree, this package follows Bitcoin Core; each difference
// is documented on the function concerned and covered by a test:
//
//   - hash function count: Core divides the filter's bit count by the
//     element count in integer arithmetic before multiplying by ln 2;
//     btcutil divides in floating point (see Params);
//   - a zero-length filter matches everything (CVE-2013-5700); btcutil's
//     divides by zero and panics when it has hash functions;
//   - script pushes are read op by op and a parse failure keeps the pushes
//     before it; btcutil discards the whole script;
//   - empty pushes (OP_0) are never tested; btcutil tests them (a filter
//     can be given btcd's rules, SetRules(RulesBtcd), to mirror what a
//     btcd server matches);
//   - BLOOM_UPDATE_P2PUBKEY_ONLY uses Core's Solver classification of
//     pay-to-pubkey and bare multisig outputs, which is stricter than
//     txscript.GetScriptClass in several ways (see isBareMultisig).
//
// Witness data is never examined by the relevance test, as in Core: a
// transaction spending a P2WPKH output is matched only through the outpoint
// it spends (or its txid), never through the public key in its witness.
package bip37
