//go:build !amd64

package synth

// setAVX2 does nothing: there is no vector generator off amd64.
func setAVX2(bool) (restore func()) { return func() {} }
