package bcoin

import (
	"context"
	"errors"
	"io"
	"os"
	"testing"

	"github.com/bloomwatch/bloomwatch/testnet"
	"github.com/bloomwatch/bloomwatch/testnet/internal/proc"
)

// Options configures a Harness.
type Options struct {
	// Log receives bcoin's output as Config.Log describes.
	Log io.Writer
	// LogLevel is bcoin's log level (Config.LogLevel).
	LogLevel string
	// Bare skips mining the setup blocks. The zero options mine until
	// segwit is active on bcoin's regtest (testnet.SegwitHeight: 432
	// blocks, bcoin's BIP9 windows of 144 like btcd's) and the first
	// coinbases are spendable, so Pay, Noise and Spend work at once.
	Bare bool
}

// Harness is a bcoin node driven by a testnet.Chain, the driver btcd's
// testnet.Harness runs on: the same funding wallet (its coinbases pay
// the funder's P2WPKH key), payments, noise, spends of a Keyring's
// outputs, scenario chains (BuildChain), bcoin's view of a wallet
// (ScanTruth) and reorganisations (Reorg, by invalidateblock).
type Harness struct {
	*testnet.Chain
	node *Node
}

// New starts a bcoin node (Start) and, unless opts.Bare, mines until
// segwit is active and coinbases are spendable (testnet.NewChain).
func New(ctx context.Context, opts Options) (*Harness, error) {
	node, err := Start(ctx, Config{Log: opts.Log, LogLevel: opts.LogLevel})
	if err != nil {
		return nil, err
	}
	h := &Harness{node: node}
	h.Chain, err = testnet.NewChain(ctx, node, testnet.ChainConfig{Brancher: brancher{node}, Bare: opts.Bare})
	if err != nil {
		return nil, err
	}
	return h, nil
}

// NewT is New for tests: it closes the harness in t.Cleanup and logs
// bcoin's output when the test fails. When Node.js or bcoin cannot be
// had (ErrNoNodeJS, ErrInstall) it skips the test with the reason,
// unless the CI environment variable is set: in CI bcoin must be there
// (.ci/run installs it), so it fails instead.
func NewT(t testing.TB, opts Options) *Harness {
	t.Helper()
	Require(t)
	var buf *proc.TailBuffer
	if opts.Log == nil {
		buf = &proc.TailBuffer{}
		opts.Log = buf
	}
	h, err := New(t.Context(), opts)
	if err != nil {
		t.Fatalf("bcoin.New: %v", err)
	}
	t.Cleanup(func() {
		if err := h.Close(); err != nil {
			t.Errorf("bcoin: close harness: %v", err)
		}
		if buf != nil && t.Failed() {
			t.Logf("bcoin output (tail):\n%s", buf.String())
		}
	})
	return h
}

// Require makes sure bcoin can be started (Package): outside CI (CI
// unset) it skips t with the reason when Node.js or the bcoin install is
// missing; in CI it fails t.
func Require(t testing.TB) {
	t.Helper()
	_, err := Package(t.Context())
	if err == nil {
		return
	}
	if os.Getenv("CI") == "" && (errors.Is(err, ErrNoNodeJS) || errors.Is(err, ErrInstall)) {
		t.Skipf("bcoin unavailable (CI would fail here): %v", err)
	}
	t.Fatalf("bcoin unavailable: %v", err)
}

// Node returns the harness's bcoin node.
func (h *Harness) Node() *Node { return h.node }
