package synth

// The AVX2 generator of CandidateWords (synth_amd64.s).

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

// candidateWordsAVX2 stores the primary forms of 8*groups candidates in
// w's first columns; start holds their first lane inputs (laneInput of
// each of the first eight, which it steps by eight candidates).
//
//go:noescape
func candidateWordsAVX2(start *[8]uint64, w *HashWords, groups int)
