package session

import (
	"context"
	"errors"
	"fmt"

	"github.com/btcsuite/btcd/wire"

	"github.com/bloomwatch/bloomwatch/spv"
)

// errSessionEnded is Broadcast's error when the session ended at the tip
// (UntilSynced) before it could broadcast.
var errSessionEnded = errors.New("the session ended")

// Broadcast sends a signed transaction to the network through the
// session's node without naming the wallet (spv.Node.Broadcast: a fresh
// short-lived connection to a peer that is not the download peer, through
// the proxy on a circuit of its own when Config.Proxy is set), once the
// node is synced, and returns when a filter peer other than the one it
// was sent to relays it back: the wallet then holds it as pending, as any
// relayed payment. A session that ends first (no peer for PeerTimeout, a
// failure) gives its error. It waits for the bridge's first SyncDone, not
// on a timer. Without opts.MinHeight the target must hold the block of
// the newest confirmed wallet coin tx spends (inputsHeight).
func (s *Session) Broadcast(ctx context.Context, tx *wire.MsgTx, opts spv.BroadcastOptions) (*spv.BroadcastResult, error) {
	if opts.MinHeight == 0 {
		h, err := s.inputsHeight(tx)
		if err != nil {
			return nil, fmt.Errorf("broadcast: %w", err)
		}
		opts.MinHeight = h
	}
	select {
	case <-s.synced:
		return s.node.Broadcast(ctx, tx, opts)
	case <-s.done:
		// The session's end at the tip closes synced first: the tip
		// was reached, the transaction can go.
		select {
		case <-s.synced:
			return s.node.Broadcast(ctx, tx, opts)
		default:
		}
		if s.doneErr != nil {
			return nil, fmt.Errorf("broadcast: %w", s.doneErr)
		}
		return nil, fmt.Errorf("broadcast: %w", errSessionEnded)
	case <-ctx.Done():
		return nil, fmt.Errorf("broadcast: wait for sync: %w", ctx.Err())
	}
}

// inputsHeight returns the height of the newest block holding a wallet
// coin tx spends: a peer below it lacks the input and would hold the
// transaction as an orphan. 0 when tx spends no confirmed wallet coin
// (the node then asks for its own tip).
func (s *Session) inputsHeight(tx *wire.MsgTx) (int32, error) {
	utxos, err := s.w.UTXOs()
	if err != nil {
		return 0, err
	}
	heights := make(map[wire.OutPoint]int32, len(utxos))
	for _, u := range utxos {
		heights[wire.OutPoint{Hash: u.Txid, Index: u.Index}] = u.Height
	}
	var h int32
	for _, in := range tx.TxIn {
		h = max(h, heights[in.PreviousOutPoint])
	}
	return h, nil
}
