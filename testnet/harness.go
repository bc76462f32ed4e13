package testnet

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/bloomwatch/bloomwatch/testnet/internal/proc"
)

// Options configures a Harness.
type Options struct {
	// Network is "regtest" (the default) or "simnet".
	Network string
	// DataDir is the node's data directory ("" = a temporary one). With
	// simnet an existing chain is reused and scanned for funding coins.
	DataDir string
	// Log receives btcd's output as Config.Log describes: an *os.File
	// live, another writer when the nodes stop, nil discards it.
	Log io.Writer
	// Bare skips mining the setup blocks. The zero Options mines until
	// the first coinbases are spendable (CoinbaseMaturity+MatureExtra)
	// and segwit and taproot are active (SegwitHeight: 432 blocks on
	// regtest, 300 on simnet), so Pay, Noise and Spend work at once. A
	// Bare harness has no funds and no segwit until it mines that far.
	Bare bool
	// Args are extra btcd flags for the node (and the reorg node).
	Args []string
	// V2Transport starts the node with --v2transport (Config.V2Transport).
	V2Transport bool
}

// Harness is a btcd node driven by a Chain (the funding wallet and every
// chain operation), plus what only btcd does here: a second node for
// Reorg, extra peers (StartPeer) and restarts on a kept simnet chain
// (RestartNode).
type Harness struct {
	*Chain
	opts   Options
	node   *Node
	node2  *Node   // the reorg partner, started by the first Reorg
	extra  []*Node // started by StartPeer
	ownDir string  // temporary simnet data directory, removed by Close
}

// New starts a node, scans its chain for funding coins (an existing
// simnet DataDir), and unless opts.Bare mines until coinbases are
// spendable (NewChain).
//
// A simnet harness without a DataDir gets a temporary one that survives
// RestartNode and is removed by Close.
func New(ctx context.Context, opts Options) (*Harness, error) {
	var ownDir string
	if opts.Network == Simnet && opts.DataDir == "" {
		dir, err := os.MkdirTemp("", "bloomwatch-simnet-")
		if err != nil {
			return nil, fmt.Errorf("testnet: simnet data dir: %w", err)
		}
		ownDir, opts.DataDir = dir, filepath.Join(dir, "data")
	}
	node, err := StartNode(ctx, Config{Network: opts.Network, DataDir: opts.DataDir, Log: opts.Log, Args: opts.Args, V2Transport: opts.V2Transport})
	if err != nil {
		if ownDir != "" {
			err = errors.Join(err, os.RemoveAll(ownDir))
		}
		return nil, err
	}
	h := &Harness{opts: opts, node: node, ownDir: ownDir}
	h.Chain, err = NewChain(ctx, node, ChainConfig{Brancher: btcdBrancher{h}, Close: h.stopAll, Bare: opts.Bare})
	if err != nil {
		return nil, err
	}
	return h, nil
}

// RestartNode stops the main node and starts it again on the same data
// directory and ports (so SPV clients can reconnect to the same address),
// then rebuilds the funder from the chain (the mempool does not survive).
// It needs simnet: btcd deletes a regtest database at every start.
func (h *Harness) RestartNode(ctx context.Context) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := h.usable(); err != nil {
		return err
	}
	if h.node.Params().Name != Simnet {
		return fmt.Errorf("%w: restart needs simnet (btcd deletes its regtest database at start)", ErrBadSpec)
	}
	cfg := h.node.Config()
	if err := h.node.Stop(); err != nil {
		return fmt.Errorf("testnet: restart: %w", err)
	}
	node, err := StartNode(ctx, cfg)
	if err != nil {
		return fmt.Errorf("testnet: restart: %w", err)
	}
	h.node, h.Chain.node = node, node
	if h.f, err = newFunder(node.Params()); err != nil {
		return err
	}
	_, tip, err := node.BestBlock()
	if err != nil {
		return err
	}
	if err := h.scanChain(ctx, 1, tip); err != nil {
		return err
	}
	if h.node2 != nil {
		if err := h.node2.DisconnectFromCtx(ctx, node); err != nil {
			return err
		}
		return h.ensureNode2(ctx)
	}
	return nil
}

// NewT is New for tests: it fails t on error and closes the harness in
// t.Cleanup. btcd's output goes to t.Log when the test fails.
func NewT(t testing.TB, opts Options) *Harness {
	t.Helper()
	var buf *proc.TailBuffer
	if opts.Log == nil {
		buf = &proc.TailBuffer{}
		opts.Log = buf
	}
	h, err := New(context.Background(), opts)
	if err != nil {
		t.Fatalf("testnet.New: %v", err)
	}
	t.Cleanup(func() {
		if err := h.Close(); err != nil {
			t.Errorf("testnet: close harness: %v", err)
		}
		if buf != nil && t.Failed() {
			t.Logf("btcd output (tail):\n%s", buf.String())
		}
	})
	return h
}

// Node returns the harness's main node (a new one after RestartNode).
func (h *Harness) Node() *Node {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.node
}

// ReorgNode returns the second node Reorg uses, or nil before the first
// Reorg. It stays connected to the main node, so it can serve as a second
// peer with the same chain.
func (h *Harness) ReorgNode() *Node {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.node2
}

// stopAll stops the extra peers, the reorg node and the main node, and
// removes the temporary simnet directory: the Chain's Close.
func (h *Harness) stopAll() error {
	var errs []error
	for _, n := range h.extra {
		errs = append(errs, n.Stop())
	}
	if h.node2 != nil {
		errs = append(errs, h.node2.Stop())
	}
	errs = append(errs, h.node.Stop())
	if h.ownDir != "" {
		errs = append(errs, os.RemoveAll(h.ownDir))
	}
	return errors.Join(errs...)
}
