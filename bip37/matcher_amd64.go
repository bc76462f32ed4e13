package bip37

// The AVX2 kernel of Matcher.Match20 (matcher_amd64.s).

// useAVX2 reports that the CPU and the OS support AVX2; tests turn it off
// to exercise the portable path.
var useAVX2 = hasAVX2()

// hasAVX2 reports AVX2 support: CPUID says AVX, OSXSAVE and AVX2, and
// XGETBV says the OS saves the YMM registers.
func hasAVX2() bool {
	const (
		osxsave  = 1 << 27 // CPUID.1:ECX
		avx      = 1 << 28 // CPUID.1:ECX
		avx2     = 1 << 5  // CPUID.(7,0):EBX
		xmmYmmOS = 6       // XCR0 bits 1 and 2
	)
	maxID, _, _, _ := cpuid(0, 0)
	if maxID < 7 {
		return false
	}
	_, _, ecx1, _ := cpuid(1, 0)
	if ecx1&(osxsave|avx) != osxsave|avx {
		return false
	}
	if xcr0, _ := xgetbv(); xcr0&xmmYmmOS != xmmYmmOS {
		return false
	}
	_, ebx7, _, _ := cpuid(7, 0)
	return ebx7&avx2 != 0
}

// cpuid executes CPUID with EAX=eaxArg and ECX=ecxArg.
func cpuid(eaxArg, ecxArg uint32) (eax, ebx, ecx, edx uint32)

// xgetbv executes XGETBV with ECX=0 (XCR0).
func xgetbv() (eax, edx uint32)

// match20AVX2 mixes the data blocks of the first n elements of w (n a
// positive multiple of 16, at most MaxMatchBatch) into ks, probes the hash
// functions of seeds seed0 and seed1 for every element, sixteen at a time,
// and returns the mask of the elements whose two probes both hit. bits is
// a Matcher's padded bits; m and dd are its fastMod.
//
//go:noescape
func match20AVX2(w *Words20, n int, ks *blocks20, seed0, seed1 uint32, bits *byte, m, dd uint64) uint64
