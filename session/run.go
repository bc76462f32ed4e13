package session

import (
	"context"
	"fmt"

	"github.com/bloomwatch/bloomwatch/netparams"
	"github.com/bloomwatch/bloomwatch/spv"
	"github.com/bloomwatch/bloomwatch/wallet"
)

// UI shows a running session (a dashboard) until the user quits, calling
// cancel, or the session ends on its own (Session.Done). It returns the
// dashboard's own failure, if any.
type UI func(ctx context.Context, s *Session, cancel context.CancelFunc) error

// Driver runs once the node has started (the demo's live chain).
type Driver func(ctx context.Context, s *Session) error

// Run is a whole sync: it opens a session on cfg, starts it, runs drive
// (nil: none), then shows ui until it returns (nil: waits until the
// session ends on its own or ctx ends, an interrupt), and stops the
// session, which flushes the wallet. It returns the stopped session, whose
// Summary is the end state, and the first error. A network without DNS
// seeds and no Config.Node.Connect is refused with an error wrapping
// spv.ErrNoPeerSource before anything is opened.
func Run(ctx context.Context, cfg Config, drive Driver, ui UI) (*Session, error) {
	if cfg.Wallet != nil && len(cfg.Node.Connect) == 0 {
		if n, err := netparams.Lookup(cfg.Wallet.Network()); err == nil && len(n.Seeds) == 0 {
			return nil, fmt.Errorf("%w: %s has no DNS seeds", spv.ErrNoPeerSource, n.Name)
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	s, err := New(cfg)
	if err != nil {
		return nil, err
	}
	runErr := s.Start(ctx)
	if runErr == nil && drive != nil {
		runErr = drive(ctx, s)
	}
	if runErr == nil {
		if ui != nil {
			runErr = ui(ctx, s, cancel)
			if runErr == nil {
				runErr = s.Err()
			}
			if runErr == nil {
				runErr = s.node.Status().Err
			}
		} else {
			runErr = s.Wait(ctx)
		}
	}
	if stopErr := s.Stop(); runErr == nil {
		runErr = stopErr
	}
	return s, runErr
}

// Wallet returns the session's wallet.
func (s *Session) Wallet() *wallet.Wallet { return s.w }
