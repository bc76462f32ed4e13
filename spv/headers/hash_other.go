//go:build !amd64 || purego

package headers

import "github.com/btcsuite/btcd/chaincfg/chainhash"

// useSHANI is false: headerHash uses crypto/sha256.
const useSHANI = false

// headerHash returns the block hash of a serialized header (its double
// SHA-256).
func headerHash(raw *[headerLen]byte) chainhash.Hash {
	return chainhash.DoubleHashH(raw[:])
}

// headerHash2 returns the block hashes of two serialized headers.
func headerHash2(out *[2]chainhash.Hash, raw *[2][headerLen]byte) {
	out[0] = chainhash.DoubleHashH(raw[0][:])
	out[1] = chainhash.DoubleHashH(raw[1][:])
}
