package synth

import "golang.org/x/sys/cpu"

// The AVX2 generator of CandidateWords (synth_amd64.s).

// useAVX2 reports that the CPU and the OS support AVX2 (x/sys/cpu reads
// CPUID and XGETBV); tests turn it off to exercise the portable path.
var useAVX2 = hasAVX2()

// hasAVX2 reports AVX2 support, the YMM registers saved by the OS.
func hasAVX2() bool { return cpu.X86.HasAVX2 }

// candidateWordsAVX2 stores the primary forms of 8*groups candidates in
// w's first columns; start holds their first lane inputs (laneInput of
// each of the first eight, which it steps by eight candidates).
//
//go:noescape
func candidateWordsAVX2(start *[8]uint64, w *HashWords, groups int)
