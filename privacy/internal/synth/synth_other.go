//go:build !amd64

package synth

// useAVX2 is false: the vector generator exists on amd64 only.
const useAVX2 = false

// candidateWordsAVX2 is never called off amd64.
func candidateWordsAVX2(*[8]uint64, *HashWords, int) {
	panic("synth: no vector generator on this architecture")
}
