package testnet

import (
	"context"
	"net"
	"path/filepath"
	"testing"

	"github.com/btcsuite/btcd/btcutil"
	"github.com/stretchr/testify/require"
)

func TestSimnetRestartKeepsChain(t *testing.T) {
	h := NewT(t, Options{Network: Simnet})
	require.Equal(t, SegwitHeight(h.Params()), mustHeight(t, h.Node()))
	key, err := NewKeyring(DemoSeed, h.Params())
	require.NoError(t, err)
	truth, err := h.BuildChain(t.Context(), ChainSpec{Blocks: 20, TxsPerBlock: 2, Keyring: key, WatchAddrs: 4, SpendFraction: 0.5, Seed: 3})
	require.NoError(t, err)
	addr, oldPID := h.Node().P2PAddr(), h.Node().PID()
	balance := h.FunderBalance()

	require.NoError(t, h.RestartNode(t.Context()))
	requireGone(t, oldPID)
	require.Equal(t, addr, h.Node().P2PAddr(), "same P2P address after restart")
	tipHash, tip, err := h.Node().BestBlock()
	require.NoError(t, err)
	require.Equal(t, truth.TipHeight, tip)
	require.Equal(t, truth.TipHash, *tipHash)
	// The funder was rebuilt from the whole chain: it now knows every
	// coinbase (New reads only the first setup blocks), and every coin
	// it holds is unspent on the chain with its value.
	require.GreaterOrEqual(t, h.FunderBalance(), balance)
	requireFunderOnChain(t, h)
	scanned, err := ScanTruth(t.Context(), h.Node(), key, PurposeBIP84, truth.StartHeight+1)
	require.NoError(t, err)
	require.Equal(t, truth.UTXOs, scanned.UTXOs)

	_, err = h.Noise(2)
	require.NoError(t, err)
	_, err = h.Mine(1)
	require.NoError(t, err)
}

func TestSimnetDataDirReuse(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "chain")
	h, err := New(t.Context(), Options{Network: Simnet, DataDir: dir})
	require.NoError(t, err)
	_, err = h.Noise(3)
	require.NoError(t, err)
	_, err = h.Mine(2)
	require.NoError(t, err)
	tip := mustHeight(t, h.Node())
	balance := h.FunderBalance()
	require.NoError(t, h.Close())

	h2 := NewT(t, Options{Network: Simnet, DataDir: dir})
	require.Equal(t, tip, mustHeight(t, h2.Node()), "no setup blocks on a mature chain")
	require.GreaterOrEqual(t, h2.FunderBalance(), balance, "the rescan finds every coinbase")
	requireFunderOnChain(t, h2)
}

func TestRestartNeedsSimnet(t *testing.T) {
	h := NewT(t, Options{Bare: true})
	require.ErrorIs(t, h.RestartNode(t.Context()), ErrBadSpec)
}

func TestStartNodePortTaken(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	port := l.Addr().(*net.TCPAddr).Port
	n, err := StartNode(context.Background(), Config{RPCPort: port})
	if err == nil {
		n.Stop()
	}
	require.Error(t, err, "btcd started with its RPC port taken")
	require.ErrorIs(t, err, ErrNodeExited)
}

func mustHeight(t *testing.T, n *Node) int32 {
	t.Helper()
	_, h, err := n.BestBlock()
	require.NoError(t, err)
	return h
}

// requireFunderOnChain checks every funder coin against gettxout.
func requireFunderOnChain(t *testing.T, h *Harness) {
	t.Helper()
	h.mu.Lock()
	defer h.mu.Unlock()
	require.NotEmpty(t, h.f.coins)
	for op, c := range h.f.coins {
		res, err := h.node.RPC().GetTxOut(&op.Hash, op.Index, true)
		require.NoError(t, err)
		require.NotNil(t, res, "funder coin %v unspent", op)
		amt, err := btcutil.NewAmount(res.Value)
		require.NoError(t, err)
		require.Equal(t, c.value, int64(amt))
	}
}
