package testnet

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bloomwatch/bloomwatch/testnet/internal/proc"
)

// TestBtcdTalksLoopbackOnly inspects the sockets of two connected btcd
// processes (P2P both ways, RPC): nothing but 127.0.0.1.
func TestBtcdTalksLoopbackOnly(t *testing.T) {
	h := NewT(t, Options{})
	_, err := h.Noise(2)
	require.NoError(t, err)
	_, err = h.Reorg(t.Context(), 1, ReorgOptions{})
	require.NoError(t, err)
	for _, n := range []*Node{h.Node(), h.node2} {
		seen, err := proc.LoopbackSockets(n.PID())
		require.NoError(t, err)
		require.GreaterOrEqual(t, seen, 3, "P2P and RPC listeners and the peer link")
	}
}
