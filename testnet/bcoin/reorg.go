package bcoin

import (
	"context"
	"errors"
	"fmt"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"

	"github.com/bloomwatch/bloomwatch/testnet"
	"github.com/bloomwatch/bloomwatch/testnet/internal/proc"
)

// brancher makes a Harness's competing branch on its one bcoin node:
// after the losing branch it invalidates the branch's first block (bcoin
// 1.0.2 then resets its chain to the fork, deletes the branch and
// empties its mempool), mines the winning branch on the same node, and
// sends the losing branch's other transactions again, so that they are
// back in the mempool as btcd puts them after a reorg.
type brancher struct{ n *Node }

var _ testnet.Brancher = brancher{}

// Split returns the node itself: it mines both branches.
func (b brancher) Split(context.Context) (testnet.FullNode, error) {
	return b.n, nil
}

// Switch invalidates the block above the fork and waits for bcoin's
// reset to it.
func (b brancher) Switch(ctx context.Context, forkHeight int32) error {
	hash, err := b.n.BlockHash(forkHeight + 1)
	if err != nil {
		return err
	}
	if err := b.n.InvalidateBlock(hash); err != nil {
		return err
	}
	return proc.Poll(ctx, fmt.Sprintf("bcoin reset to height %d", forkHeight), func() (bool, error) {
		_, height, err := b.n.BestBlock()
		return height == forkHeight, err
	})
}

// Join sends the losing branch's transactions that the winning branch
// does not hold again, oldest first; one bcoin refuses (a conflict with
// the winning branch, a spend of a disconnected coinbase) stays out, as
// btcd leaves it out.
func (b brancher) Join(_ context.Context, losing, winning []*wire.MsgBlock, _ testnet.ReorgOptions) error {
	mined := make(map[chainhash.Hash]bool)
	for _, blk := range winning {
		for _, tx := range blk.Transactions {
			mined[tx.TxHash()] = true
		}
	}
	for _, blk := range losing {
		for _, tx := range blk.Transactions[1:] {
			if mined[tx.TxHash()] {
				continue
			}
			if err := b.n.SendTx(tx); err != nil && !errors.Is(err, ErrTxRejected) {
				return err
			}
		}
	}
	return nil
}
