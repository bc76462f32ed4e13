package hostile

import (
	"fmt"
	"sync"

	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
)

// Upstream is the honest full node the hostile peer reads the chain from.
// *rpcclient.Client (testnet.Node.RPC()) implements it.
type Upstream interface {
	GetBestBlock() (*chainhash.Hash, int32, error)
	GetBlockHeader(hash *chainhash.Hash) (*wire.BlockHeader, error)
	GetBlock(hash *chainhash.Hash) (*wire.MsgBlock, error)
	GetRawMempool() ([]*chainhash.Hash, error)
	GetRawTransaction(hash *chainhash.Hash) (*btcutil.Tx, error)
}

// chain is a cached copy of the upstream's best header chain, refreshed on
// demand; it follows upstream reorganizations. It is shared by the
// connections of one Peer.
type chain struct {
	up Upstream

	mu      sync.Mutex
	headers []wire.BlockHeader // by height
	hashes  []chainhash.Hash   // by height
	height  map[chainhash.Hash]int32
}

// newChain returns an empty cache over up.
func newChain(up Upstream) *chain {
	return &chain{up: up, height: make(map[chainhash.Hash]int32)}
}

// refresh brings the cache up to the upstream's best chain and returns a
// copy of the headers by height.
func (c *chain) refresh() ([]wire.BlockHeader, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	tip, tipHeight, err := c.up.GetBestBlock()
	if err != nil {
		return nil, fmt.Errorf("upstream best block: %w", err)
	}
	if int(tipHeight) < len(c.hashes) && c.hashes[tipHeight] == *tip && int(tipHeight) == len(c.hashes)-1 {
		return append([]wire.BlockHeader(nil), c.headers...), nil
	}
	// Walk back from the tip until a header the cache already holds at
	// the same height (or genesis).
	var branch []wire.BlockHeader
	var branchHashes []chainhash.Hash
	hash, h := *tip, tipHeight
	for h >= 0 {
		if int(h) < len(c.hashes) && c.hashes[h] == hash {
			break
		}
		hdr, err := c.up.GetBlockHeader(&hash)
		if err != nil {
			return nil, fmt.Errorf("upstream header %v: %w", hash, err)
		}
		branch = append(branch, *hdr)
		branchHashes = append(branchHashes, hash)
		hash = hdr.PrevBlock
		h--
	}
	keep := int(h) + 1
	for _, old := range c.hashes[min(keep, len(c.hashes)):] {
		delete(c.height, old)
	}
	c.headers = c.headers[:min(keep, len(c.headers))]
	c.hashes = c.hashes[:min(keep, len(c.hashes))]
	for i := len(branch) - 1; i >= 0; i-- {
		c.height[branchHashes[i]] = int32(len(c.headers))
		c.headers = append(c.headers, branch[i])
		c.hashes = append(c.hashes, branchHashes[i])
	}
	return append([]wire.BlockHeader(nil), c.headers...), nil
}

// block returns the upstream's block hash.
func (c *chain) block(hash chainhash.Hash) (*wire.MsgBlock, error) {
	b, err := c.up.GetBlock(&hash)
	if err != nil {
		return nil, fmt.Errorf("upstream block %v: %w: %w", hash, ErrNotFound, err)
	}
	return b, nil
}

// view is the chain one connection advertises: the upstream's, or a fork
// of it. It answers getheaders.
type view struct {
	headers []wire.BlockHeader
	height  map[chainhash.Hash]int32
}

// newView indexes headers (by height).
func newView(headers []wire.BlockHeader) *view {
	v := &view{headers: headers, height: make(map[chainhash.Hash]int32, len(headers))}
	for i := range headers {
		v.height[headers[i].BlockHash()] = int32(i)
	}
	return v
}

// tipHeight returns the height of the view's tip.
func (v *view) tipHeight() int32 { return int32(len(v.headers)) - 1 }

// contains reports whether hash is on the view.
func (v *view) contains(hash chainhash.Hash) bool {
	_, ok := v.height[hash]
	return ok
}

// answer returns the height of the first locator hash on the view (0 when
// none is) and the headers after it, up to stop or limit headers.
func (v *view) answer(locator []*chainhash.Hash, stop chainhash.Hash, limit int) (int32, []wire.BlockHeader) {
	start := int32(0)
	for _, l := range locator {
		if h, ok := v.height[*l]; ok {
			start = h
			break
		}
	}
	var out []wire.BlockHeader
	for h := start + 1; int(h) < len(v.headers) && len(out) < limit; h++ {
		out = append(out, v.headers[h])
		if v.headers[h].BlockHash() == stop {
			break
		}
	}
	return start, out
}
