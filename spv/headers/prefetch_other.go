//go:build !amd64 || purego

package headers

// prefetch does nothing here.
func prefetch(p *uint32) {}
