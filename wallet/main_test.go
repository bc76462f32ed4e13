package wallet

import (
	"os"
	"testing"
)

// TestMain runs the package's tests with the lookahead reserve off unless
// a test asks for it (WithReserve): most of them check the gap rule and
// the addresses it derives, index by index; the reserve's own tests
// (reserve_test.go) and the end-to-end ones turn it on.
func TestMain(m *testing.M) {
	defaultReserve = 0
	os.Exit(m.Run())
}
