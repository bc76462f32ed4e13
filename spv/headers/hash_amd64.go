//go:build amd64 && !purego

package headers

import "github.com/btcsuite/btcd/chaincfg/chainhash"

// sha256dHeader writes the double SHA-256 of in to out with the SHA
// extensions (hash_amd64.s); only for CPUs with useSHANI.
//
//go:noescape
func sha256dHeader(out *chainhash.Hash, in *[headerLen]byte)

// sha256dHeader2 is sha256dHeader on two headers at once.
//
//go:noescape
func sha256dHeader2(out *[2]chainhash.Hash, in *[2][headerLen]byte)

// cpuid executes CPUID.
func cpuid(leaf, sub uint32) (eax, ebx, ecx, edx uint32)

// useSHANI reports whether the CPU has what sha256dHeader needs: the SHA
// extensions, SSSE3 and SSE4.1.
var useSHANI = hasSHANI()

func hasSHANI() bool {
	if maxLeaf, _, _, _ := cpuid(0, 0); maxLeaf < 7 {
		return false
	}
	_, _, ecx1, _ := cpuid(1, 0)
	_, ebx7, _, _ := cpuid(7, 0)
	const ssse3, sse41, sha = 1 << 9, 1 << 19, 1 << 29
	return ecx1&ssse3 != 0 && ecx1&sse41 != 0 && ebx7&sha != 0
}

// headerHash returns the block hash of a serialized header (its double
// SHA-256, as chainhash.DoubleHashH). With the SHA extensions it runs the
// three compressions directly, without crypto/sha256's per-call work
// (about half the time of DoubleHashH for an 80-byte header).
func headerHash(raw *[headerLen]byte) chainhash.Hash {
	var h chainhash.Hash
	if useSHANI {
		sha256dHeader(&h, raw)
		return h
	}
	return chainhash.DoubleHashH(raw[:])
}

// headerHash2 returns the block hashes of two serialized headers. With the
// SHA extensions it hashes them together, their rounds interleaved, in
// about the time of one and a half.
func headerHash2(out *[2]chainhash.Hash, raw *[2][headerLen]byte) {
	if useSHANI {
		sha256dHeader2(out, raw)
		return
	}
	out[0] = chainhash.DoubleHashH(raw[0][:])
	out[1] = chainhash.DoubleHashH(raw[1][:])
}
