package headers

import (
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
)

// maxIdleBatchBuffer is the largest batch buffer kept between batches.
const maxIdleBatchBuffer = 1 << 20

// encodeHeader serializes h into b exactly as wire does.
func encodeHeader(b *[headerLen]byte, h *wire.BlockHeader) {
	binary.LittleEndian.PutUint32(b[0:], uint32(h.Version))
	copy(b[4:36], h.PrevBlock[:])
	copy(b[36:68], h.MerkleRoot[:])
	binary.LittleEndian.PutUint32(b[68:], uint32(h.Timestamp.Unix()))
	binary.LittleEndian.PutUint32(b[72:], h.Bits)
	binary.LittleEndian.PutUint32(b[76:], h.Nonce)
}

// Connect validates and stores a batch of headers, in order. Headers
// already stored are skipped. Each header is checked in the context of its
// parent, which may be any stored header (side branches are kept) or an
// earlier header of the batch. The first invalid header stops the batch with
// a *ValidationError; the headers before it stay stored and are reported in
// the result. The batch is fsynced before Connect returns and before the
// best chain moves; the best chain is the branch with the most cumulative
// work (the first seen among equals), and a move to another branch is
// reported in Reorg. Readers are not blocked while the batch is written:
// during that time they may already find the batch's headers by hash, but
// the best chain moves only once the batch is durable.
func (s *Store) Connect(hdrs []wire.BlockHeader) (ConnectResult, error) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ConnectResult{}, ErrClosed
	}

	now := s.clock().Unix()
	oldTip := s.tipIndex()
	bestNew := oldTip
	bestHdr := -1 // index in hdrs of the header of bestNew, when new
	firstNew := int32(s.nodes.len())
	lastCP := s.rules.lastCheckpointAtOrBelow(s.nodes.at(oldTip).height)
	s.pending = s.pending[:0]

	var verr *ValidationError
	var fullErr error
	// Headers are serialized and hashed two at a time (headerHash2);
	// header i is raws[i%2] and hashes[i%2].
	var raws [2][headerLen]byte
	var hashes [2]chainhash.Hash
	for i := range hdrs {
		h := &hdrs[i]
		if i%2 == 0 {
			encodeHeader(&raws[0], h)
			if i+1 < len(hdrs) {
				encodeHeader(&raws[1], &hdrs[i+1])
				headerHash2(&hashes, &raws)
				s.index.prefetch(&hashes[1])
			} else {
				hashes[0] = headerHash(&raws[0])
			}
			s.index.prefetch(&hashes[0])
		}
		raw, hash := &raws[i%2], hashes[i%2]
		// A parent is always stored before its children, so the newest
		// node has none: a header extending it (a peer's headers in
		// order) is not stored yet and its parent needs no lookup.
		parent := int32(s.nodes.len() - 1)
		extendsNewest := h.PrevBlock == s.nodes.at(parent).hash
		if !extendsNewest {
			s.indexNew()
			if _, known := s.index.lookup(&s.nodes, &hash); known {
				continue
			}
		}
		if detail, err := s.rules.checkSanity(h, &hash, now); err != nil {
			s.indexNew()
			height := int32(-1)
			if p, ok := s.index.lookup(&s.nodes, &h.PrevBlock); ok {
				height = s.nodes.at(p).height + 1
			}
			verr = &ValidationError{Index: i, Hash: hash, Height: height, Err: err, Detail: detail}
			break
		}
		if !extendsNewest {
			p, ok := s.index.lookup(&s.nodes, &h.PrevBlock)
			if !ok {
				verr = &ValidationError{Index: i, Hash: hash, Height: -1, Err: ErrNotConnecting,
					Detail: fmt.Sprintf("parent %v unknown", h.PrevBlock)}
				break
			}
			parent = p
		}
		if detail, err := s.rules.checkContext(s, h, &hash, parent, lastCP); err != nil {
			verr = &ValidationError{Index: i, Hash: hash, Height: s.nodes.at(parent).height + 1,
				Err: err, Detail: detail}
			break
		}

		if s.nodes.len() >= maxNodes {
			fullErr = fmt.Errorf("%w (%d headers)", ErrFull, maxNodes)
			break
		}
		p := s.nodes.at(parent)
		n := node{
			hash:   hash,
			parent: parent,
			height: p.height + 1,
			bits:   h.Bits,
			time:   uint32(h.Timestamp.Unix()),
			work:   p.work.add(s.rules.info(h.Bits).work),
		}
		if parent != bestNew {
			if detail, err := s.admitSide(n.work, bestNew); err != nil {
				verr = &ValidationError{Index: i, Hash: hash, Height: n.height, Err: err, Detail: detail}
				break
			}
		}
		idx := s.nodes.push(n)
		if int(idx)-s.index.count >= indexBehind {
			s.indexNew()
		}
		s.pending = append(s.pending, raw[:]...)
		s.pending = binary.LittleEndian.AppendUint32(s.pending, crc32c(raw[:]))
		if n.work.cmp(s.nodes.at(bestNew).work) > 0 {
			bestNew, bestHdr = idx, i
		}
	}

	s.indexNew()
	res := ConnectResult{Accepted: s.nodes.len() - int(firstNew)}
	var storeErr error
	switch {
	case res.Accepted > 0 && s.overBudget(bestNew):
		remap, evicted, err := s.evictSide(firstNew, bestNew)
		if remap == nil {
			s.dropBatch(firstNew)
			return ConnectResult{}, err
		}
		storeErr = err
		res.Evicted = evicted
		for _, j := range remap[firstNew:] {
			if j < 0 {
				res.Accepted--
				res.Dropped++
			}
		}
		bestNew, oldTip = remap[bestNew], remap[oldTip]
	case res.Accepted > 0:
		if err := s.flush(firstNew); err != nil {
			return ConnectResult{}, err
		}
	}
	if bestNew != oldTip {
		res.NewTip = true
		res.Reorg = s.setBest(bestNew, oldTip)
		s.tipHdr = hdrs[bestHdr]
	}
	if storeErr != nil {
		return res, fmt.Errorf("headers: sync dir after evicting side branches: %w", storeErr)
	}
	if verr != nil {
		return res, verr
	}
	return res, fullErr
}

// indexBehind is how many stored nodes Connect leaves out of the hash
// index at most (indexNew adds them).
const indexBehind = 64

// indexNew adds the nodes stored since it last ran to the hash index
// (Store.index holds nodes 0 to index.count-1). Connect prefetches the
// slot of each header's hash as soon as it has hashed it, and inserts the
// nodes 64 at a time, before anything is looked up and before the batch is
// written: by then the slots are in the cache, and the inserts in a row
// overlap whatever misses remain, where an insert right after each
// header's validation would wait for its own.
func (s *Store) indexNew() {
	for i := int32(s.index.count); i < int32(s.nodes.len()); i++ {
		s.index.insert(&s.nodes, i)
	}
}

// Side-branch bounds. Every valid header off the best chain is kept (a
// reorg may need it), but on networks with minimum-difficulty blocks a
// long low-work branch costs an attacker almost nothing. A header that
// does not extend the best tip is stored only while its branch could
// still plausibly win:
//
//   - once the best chain has the network's minimum chain work, a
//     side-branch header with less than that is refused (Bitcoin Core's
//     nMinimumChainWork: no honest branch forks that far back);
//   - a side-branch header more than DefaultSideBranchMargin blocks' work
//     (at the best tip's difficulty) below the best chain is refused
//     (ErrLowWorkBranch): on testnets the 20-minute rule and the two-hour
//     future limit then bound each such branch to about half the margin in
//     minimum-difficulty headers;
//   - at most DefaultMaxSideHeaders side-branch headers stay stored: past
//     that the side branches with the least work are evicted (evict.go),
//     never the branch that becomes the best chain.
//
// A deep reorg delivered from further back than the margin is refused: the
// price of the bound, and about two weeks of a real network's work.
const (
	// DefaultSideBranchMargin is the default margin in blocks: one
	// retarget period.
	DefaultSideBranchMargin = 2016
	// DefaultMaxSideHeaders is the default bound on stored side-branch
	// headers (about 6.4 MB of memory and 8.4 MB of file).
	DefaultMaxSideHeaders = 100_000
)

// admitSide decides whether a header of cumulative work w that does not
// extend the best tip (node best) may be stored.
func (s *Store) admitSide(w work, best int32) (string, error) {
	b := s.nodes.at(best)
	if minWork := s.net.MinChainWork; minWork != nil && b.work.big().Cmp(minWork) >= 0 && w.big().Cmp(minWork) < 0 {
		return fmt.Sprintf("branch work %v below the network's minimum chain work %v", w.big(), minWork), ErrLowWorkBranch
	}
	floor := b.work.sub(s.rules.info(b.bits).work.mul(uint64(s.sideMargin)))
	if w.cmp(floor) < 0 {
		return fmt.Sprintf("branch work %v, best chain %v minus %d blocks at the tip's difficulty", w.big(), b.work.big(), s.sideMargin), ErrLowWorkBranch
	}
	return "", nil
}

// flush appends the batch's records and fsyncs, with mu (held on entry and
// on return) released meanwhile: the batch's nodes are in the index and its
// records in s.pending, which readers may read but nobody writes until mu
// is taken again (writers are serialized by wmu). On failure it removes the
// batch from memory and from the file, so both stay as before the batch.
func (s *Store) flush(firstNew int32) error {
	s.mu.Unlock()
	_, err := s.f.WriteAt(s.pending, s.size)
	if err == nil {
		err = s.sync(s.f)
	}
	s.mu.Lock()
	if err != nil {
		_ = s.f.Truncate(s.size) // best effort; Open drops a torn tail anyway
		s.dropBatch(firstNew)
		return fmt.Errorf("headers: append to %s: %w", s.path, err)
	}
	s.size += int64(len(s.pending))
	if cap(s.pending) > maxIdleBatchBuffer {
		s.pending = nil
	} else {
		s.pending = s.pending[:0]
	}
	return nil
}

// dropBatch removes the nodes from firstNew on (a batch that could not be
// written) from memory.
func (s *Store) dropBatch(firstNew int32) {
	for i := int32(s.nodes.len()) - 1; i >= firstNew; i-- {
		s.index.remove(&s.nodes, i)
	}
	s.nodes.truncate(firstNew)
	s.pending = s.pending[:0]
	s.memo = walkMemo{} // it may name a removed index
}

// setBest makes node newTip the best tip and returns the reorganization, or
// nil when newTip extends oldTip.
func (s *Store) setBest(newTip, oldTip int32) *Reorg {
	// Nodes above the old tip's height are on no best chain: a plain
	// extension is filled in down to the old tip in one walk.
	oldTop, newTop := int32(len(s.best)-1), s.nodes.at(newTip).height
	if newTop > oldTop {
		s.best = slices.Grow(s.best, int(newTop-oldTop))[:newTop+1]
		i := newTip
		for h := newTop; h > oldTop; h-- {
			s.best[h] = i
			i = s.nodes.at(i).parent
		}
		if i == oldTip {
			return nil
		}
		s.best = s.best[:oldTop+1] // a reorganization
	}

	fork := newTip
	for !s.onBest(fork) {
		fork = s.nodes.at(fork).parent
	}
	forkHeight := s.nodes.at(fork).height

	var reorg *Reorg
	if fork != oldTip {
		reorg = &Reorg{ForkHeight: forkHeight, ForkHash: s.nodes.at(fork).hash,
			Detached: make([]chainhash.Hash, 0, int32(len(s.best)-1)-forkHeight)}
		for h := int32(len(s.best)) - 1; h > forkHeight; h-- {
			reorg.Detached = append(reorg.Detached, s.nodes.at(s.best[h]).hash)
		}
	}
	// The new branch, filled in from its tip down to the fork.
	s.best = s.best[:forkHeight+1]
	s.best = slices.Grow(s.best, int(s.nodes.at(newTip).height-forkHeight))
	s.best = s.best[:s.nodes.at(newTip).height+1]
	for i := newTip; i != fork; i = s.nodes.at(i).parent {
		s.best[s.nodes.at(i).height] = i
	}
	if reorg != nil {
		reorg.Attached = make([]chainhash.Hash, 0, len(s.best)-1-int(forkHeight))
		for _, i := range s.best[forkHeight+1:] {
			reorg.Attached = append(reorg.Attached, s.nodes.at(i).hash)
		}
	}
	return reorg
}
