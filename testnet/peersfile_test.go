package testnet

import (
	"errors"
	"net"
	"path/filepath"
	"testing"

	"github.com/btcsuite/btcd/addrmgr"
	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/wire"
	"github.com/stretchr/testify/require"
)

func TestWritePeersFileLoadsInBtcd(t *testing.T) {
	dir := t.TempDir()
	params := &chaincfg.RegressionNetParams
	want := map[string]wire.ServiceFlag{
		"127.0.0.1:18444": wire.SFNodeNetwork | wire.SFNodeBloom,
		"127.0.0.1:18445": wire.SFNodeNetwork,
		"[::1]:18446":     wire.SFNodeBloom,
	}
	var addrs []KnownAddr
	for a, s := range want {
		addrs = append(addrs, KnownAddr{Addr: a, Services: s})
	}
	require.NoError(t, WritePeersFile(dir, params, addrs))
	// btcd's own address manager reads the file it finds in its
	// network's data directory, loopback addresses included.
	am := addrmgr.New(filepath.Join(dir, "regtest"), func(host string) ([]net.IP, error) {
		return nil, errors.New("no lookups in tests")
	})
	am.Start()
	defer func() { require.NoError(t, am.Stop()) }()
	require.Equal(t, len(want), am.NumAddresses())
	got := make(map[string]wire.ServiceFlag)
	for range 500 {
		if ka := am.GetAddress(); ka != nil {
			got[addrmgr.NetAddressKey(ka.NetAddress())] = ka.NetAddress().Services
		}
	}
	require.Equal(t, want, got)
	require.Error(t, WritePeersFile(dir, params, []KnownAddr{{Addr: "node.example:1"}}))
}
