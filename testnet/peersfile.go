package testnet

import (
	"crypto/rand"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"

	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/wire"
)

// KnownAddr is one address for a btcd node's address manager.
type KnownAddr struct {
	// Addr is "ip:port".
	Addr string
	// Services are the service bits the address advertises.
	Services wire.ServiceFlag
}

// The shape of btcd v0.24.2's peers.json (addrmgr's serializedAddrManager,
// version 2).
const (
	peersFileVersion = 2
	peersNewBuckets  = 1024
	peersTriedBucket = 64
)

type peersFileAddr struct {
	Addr        string
	Src         string
	Attempts    int
	TimeStamp   int64
	LastAttempt int64
	LastSuccess int64
	Services    wire.ServiceFlag
	SrcServices wire.ServiceFlag
}

type peersFile struct {
	Version      int
	Key          [32]byte
	Addresses    []*peersFileAddr
	NewBuckets   [peersNewBuckets][]string
	TriedBuckets [peersTriedBucket][]string
}

// WritePeersFile writes the address manager file (peers.json) of a btcd
// node that will start with dataDir (Config.DataDir) on params, so that
// the node knows addrs from its start and hands them out in answer to
// getaddr. btcd's address manager refuses loopback addresses it hears
// about on the network, but loads those of its file: this is how a test
// node on 127.0.0.1 can tell a client about other loopback nodes. btcd
// answers a getaddr with a random 23 % of what it knows (rounded down:
// at least five addresses for one), and never on simnet.
func WritePeersFile(dataDir string, params *chaincfg.Params, addrs []KnownAddr) error {
	f := peersFile{Version: peersFileVersion}
	if _, err := rand.Read(f.Key[:]); err != nil {
		return fmt.Errorf("testnet: peers file key: %w", err)
	}
	for _, a := range addrs {
		host, port, err := net.SplitHostPort(a.Addr)
		if err != nil || net.ParseIP(host) == nil {
			return fmt.Errorf("testnet: peers file address %q: %w", a.Addr, ErrBadSpec)
		}
		key := net.JoinHostPort(net.ParseIP(host).String(), port)
		f.Addresses = append(f.Addresses, &peersFileAddr{
			Addr: key, Src: key, Services: a.Services, SrcServices: a.Services,
		})
		f.NewBuckets[0] = append(f.NewBuckets[0], key)
	}
	b, err := json.Marshal(&f)
	if err != nil {
		return fmt.Errorf("testnet: peers file: %w", err)
	}
	dir := filepath.Join(dataDir, btcdNetDir(params))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("testnet: peers file: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "peers.json"), b, 0o600); err != nil {
		return fmt.Errorf("testnet: peers file: %w", err)
	}
	return nil
}

// btcdNetDir is the subdirectory btcd appends to its data directory for
// params (btcd's netName: "testnet" for testnet3, the name otherwise).
func btcdNetDir(params *chaincfg.Params) string {
	if params.Net == wire.TestNet3 {
		return "testnet"
	}
	return params.Name
}
