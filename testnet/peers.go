package testnet

import (
	"context"
	"fmt"
)

// StartPeer starts one more btcd of the harness's network, connects it to
// the main node and waits until it has the main node's chain. Close stops
// it with the others. Blocks mined on the main node reach it, and
// transactions it accepts reach the main node, as between any two
// connected full nodes: a test peer of a client that needs more than one.
func (h *Harness) StartPeer(ctx context.Context) (*Node, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := h.usable(); err != nil {
		return nil, err
	}
	n, err := StartNode(ctx, Config{Network: h.opts.Network, Log: h.opts.Log, Args: h.opts.Args})
	if err != nil {
		return nil, fmt.Errorf("testnet: extra peer: %w", err)
	}
	h.extra = append(h.extra, n)
	if err := n.ConnectToCtx(ctx, h.node); err != nil {
		return nil, err
	}
	return n, nil
}
