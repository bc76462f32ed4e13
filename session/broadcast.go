package session

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/btcsuite/btcd/wire"

	"github.com/bloomwatch/bloomwatch/spv"
)

// syncPoll is how often Broadcast looks whether the node is synced.
const syncPoll = 50 * time.Millisecond

// errSessionEnded is Broadcast's error when the session ended at the tip
// (UntilSynced) before it could broadcast.
var errSessionEnded = errors.New("the session ended")

// Broadcast sends a signed transaction to the network through the
// session's node without naming the wallet (spv.Node.Broadcast: a fresh
// short-lived connection to a peer that is not the download peer, through
// the proxy on a circuit of its own when Config.Proxy is set), once the
// node is synced, and returns when a filter peer other than the one it
// was sent to relays it back: the wallet then holds it as pending, as any
// relayed payment. A session that ends first (no peer for PeerTimeout)
// gives its error.
func (s *Session) Broadcast(ctx context.Context, tx *wire.MsgTx, opts spv.BroadcastOptions) (*spv.BroadcastResult, error) {
	tick := time.NewTicker(syncPoll)
	defer tick.Stop()
	for {
		st := s.node.Status()
		switch {
		case st.Err != nil:
			return nil, fmt.Errorf("broadcast: %w", st.Err)
		case st.Synced:
			return s.node.Broadcast(ctx, tx, opts)
		}
		select {
		case <-s.done:
			if s.doneErr != nil {
				return nil, fmt.Errorf("broadcast: %w", s.doneErr)
			}
			return nil, fmt.Errorf("broadcast: %w", errSessionEnded)
		case <-ctx.Done():
			return nil, fmt.Errorf("broadcast: wait for sync: %w", ctx.Err())
		case <-tick.C:
		}
	}
}
