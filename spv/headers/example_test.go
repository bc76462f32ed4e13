package headers_test

import (
	"errors"
	"fmt"
	"os"

	"github.com/bloomwatch/bloomwatch/netparams"
	"github.com/bloomwatch/bloomwatch/spv/headers"
	"github.com/btcsuite/btcd/wire"
)

// Example opens a regtest store, feeds it a batch as a headers message
// would, and tells a validation failure from an I/O failure.
func Example() {
	dir, err := os.MkdirTemp("", "headers-example")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)

	net, _ := netparams.Lookup("regtest")
	s, err := headers.Open(dir, net)
	if errors.Is(err, headers.ErrCorrupt) {
		fmt.Println("corrupt header file: delete and resync:", headers.Remove(dir))
		return
	} else if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()

	hash, height := s.Tip()
	fmt.Println(height, hash)

	// An unsolved header with an unknown parent: proof of work is checked
	// before the parent is looked up.
	orphan := wire.BlockHeader{Version: 4, Bits: net.Params.PowLimitBits, Timestamp: net.Params.GenesisBlock.Header.Timestamp}
	orphan.PrevBlock[0] = 1
	res, err := s.Connect([]wire.BlockHeader{orphan})
	var verr *headers.ValidationError
	switch {
	case errors.As(err, &verr):
		fmt.Println(res.Accepted, verr.Index, verr.Err)
	case err != nil:
		fmt.Println("store failure:", err)
	}
	// Output:
	// 0 0f9188f13cb7b2c71f2a335e3a4fc328bf5beb436012afca590b1a11466e2206
	// 0 0 headers: hash above the claimed target
}
