//go:build !amd64

package bip37

// setAVX2 does nothing: there is no vector kernel off amd64.
func setAVX2(bool) (restore func()) { return func() {} }
