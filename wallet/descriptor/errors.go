package descriptor

import "errors"

// Sentinel errors. They are wrapped with details; test for them with
// errors.Is. Their texts are package wallet's, which reports them as its
// own (wallet.ErrInvalidDescriptor is ErrInvalid, and so on).
var (
	// ErrInvalid is returned for an output descriptor that is malformed
	// or invalid by BIP380-389 (syntax, key origin, derivation step, a
	// key form its function does not allow).
	ErrInvalid = errors.New("wallet: invalid descriptor")

	// ErrChecksum is returned when a descriptor's "#checksum" is
	// malformed or does not match the descriptor (BIP380).
	ErrChecksum = errors.New("wallet: descriptor checksum mismatch")

	// ErrUnsupported is returned for a valid descriptor the wallet cannot
	// watch: a function other than pkh, sh(wpkh), wpkh, tr (key path
	// only), the multisig forms, addr and raw, or a ranged derivation that
	// is not an HD account's (see Parse).
	ErrUnsupported = errors.New("wallet: descriptor not supported")

	// ErrHardenedStep is returned for a hardened derivation step after an
	// extended public key: deriving it needs the private key.
	ErrHardenedStep = errors.New("wallet: hardened derivation after a public key needs the private key")

	// ErrPrivateKey is returned when a private key is given (an extended
	// private key, or a WIF key): a watch-only wallet refuses to store
	// private keys.
	ErrPrivateKey = errors.New("wallet: private key given, only public keys are accepted")

	// ErrInvalidKey is returned for a public key that does not decode
	// (bad checksum, bad length, unknown version, not on the curve).
	ErrInvalidKey = errors.New("wallet: invalid extended public key")

	// ErrWrongNetwork is returned for an extended key of another network
	// than the one asked for.
	ErrWrongNetwork = errors.New("wallet: wrong network")
)
