//go:build amd64 && !purego

package headers

// prefetch asks the CPU to bring the cache line of *p into its caches
// without waiting for it.
//
//go:noescape
func prefetch(p *uint32)
