package bip37

import "golang.org/x/sys/cpu"

// The AVX2 kernel of Matcher.Match20 (matcher_amd64.s).

// useAVX2 reports that the CPU and the OS support AVX2 (x/sys/cpu reads
// CPUID and XGETBV); tests turn it off to exercise the portable path.
var useAVX2 = hasAVX2()

// hasAVX2 reports AVX2 support, the YMM registers saved by the OS.
func hasAVX2() bool { return cpu.X86.HasAVX2 }

// match20AVX2 mixes the data blocks of the first n elements of w (n a
// positive multiple of 16, at most MaxMatchBatch) into ks, probes the hash
// functions of seeds seed0 and seed1 for every element, sixteen at a time,
// and returns the mask of the elements whose two probes both hit. bits is
// a Matcher's padded bits; m and dd are its fastMod.
//
//go:noescape
func match20AVX2(w *Words20, n int, ks *blocks20, seed0, seed1 uint32, bits *byte, m, dd uint64) uint64
