//go:build !amd64

package bip37

// useAVX2 is false: the vector kernel exists on amd64 only.
const useAVX2 = false

// match20AVX2 is never called off amd64.
func match20AVX2(*Words20, int, *blocks20, uint32, uint32, *byte, uint64, uint64) uint64 {
	panic("bip37: no vector kernel on this architecture")
}
