package descriptor

// Kind names the output type of a script (package wallet's Kind is this
// type).
type Kind string

// The output types of the scripts a descriptor describes.
const (
	// KindP2PKH is pay-to-pubkey-hash (BIP44 accounts, 1... and m/n...).
	KindP2PKH Kind = "p2pkh"
	// KindP2SHP2WPKH is P2WPKH nested in P2SH (BIP49 accounts).
	KindP2SHP2WPKH Kind = "p2sh-p2wpkh"
	// KindP2WPKH is native segwit v0 pay-to-witness-pubkey-hash (BIP84).
	KindP2WPKH Kind = "p2wpkh"
	// KindP2SH is pay-to-script-hash.
	KindP2SH Kind = "p2sh"
	// KindP2WSH is segwit v0 pay-to-witness-script-hash.
	KindP2WSH Kind = "p2wsh"
	// KindP2SHP2WSH is P2WSH nested in P2SH (sh(wsh()) descriptors).
	KindP2SHP2WSH Kind = "p2sh-p2wsh"
	// KindP2TR is segwit v1 pay-to-taproot.
	KindP2TR Kind = "p2tr"
	// KindMultisig is a bare multisig output script.
	KindMultisig Kind = "multisig"
)
