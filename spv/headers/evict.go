package headers

import (
	"bufio"
	"container/heap"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/btcsuite/btcd/wire"
)

// Side-branch eviction. The bound on side-branch headers (maxSide) must
// never block the branch that is about to win: a bound that refuses
// headers once full lets anyone who can make valid side branches (free on
// regtest, cheap on the testnets' minimum-difficulty blocks) fill it and
// then keep an honest reorg out. So the bound is enforced by eviction, not
// refusal. A batch is validated and stored whole, and the best chain is
// chosen with it; only then, when more than maxSide headers are off the
// best chain, the side branches with the least work go, leaf by leaf (the
// leaf with the least cumulative work first; among equals the newest, as
// fork choice keeps the first seen), until sideTarget are left. The
// branch that becomes best is never a side branch, so it always gets in
// (Bitcoin Core judges a headers batch by the work at its end too,
// net_processing's GetAntiDoSWorkThreshold); the side branch with the
// most work is the last to go. The new best chain and the old one (whose
// blocks a reorganization reports) are never evicted.
//
// headers.dat is then rewritten without the evicted records (a temporary
// file, fsync, rename, fsync of the directory) and the nodes renumbered in
// place: the file always holds exactly the stored headers, so a restart
// finds the same ones. The rewrite costs one pass over the file (8.4 MB
// for 100,000 headers, 75 MB for mainnet's 900,000) under the write lock:
// 12-16 ms a batch at 100,000 headers against 0.6-1.3 ms for a batch that
// evicts nothing (BenchmarkSideBranchEviction). The slack between maxSide
// and sideTarget makes it happen at most once per maxSide/8 new
// side-branch headers (12,500 by default; a batch holds at most 2,000).

// sideTarget is how many side-branch headers an eviction leaves.
func (s *Store) sideTarget() int { return s.maxSide - s.maxSide/8 }

// SideHeaders returns the number of stored headers that are not on the
// best chain.
func (s *Store) SideHeaders() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.nodes.len() - len(s.best)
}

// overBudget reports whether more than maxSide headers would be off the
// best chain if node tip were the best tip.
func (s *Store) overBudget(tip int32) bool {
	return s.nodes.len()-int(s.nodes.at(tip).height)-1 > s.maxSide
}

// Node states during an eviction.
const (
	sideNode    int8 = iota // off both best chains: may be evicted
	guardedNode             // on the old or the new best chain
	evictedNode
)

// leafHeap orders side-branch leaves for eviction: least cumulative work
// first, the newest (highest index) first among equals.
type leafHeap struct {
	nodes *nodeArena
	idx   []int32
}

func (h *leafHeap) Len() int { return len(h.idx) }
func (h *leafHeap) Less(i, j int) bool {
	a, b := h.nodes.at(h.idx[i]), h.nodes.at(h.idx[j])
	if c := a.work.cmp(b.work); c != 0 {
		return c < 0
	}
	return h.idx[i] > h.idx[j]
}
func (h *leafHeap) Swap(i, j int) { h.idx[i], h.idx[j] = h.idx[j], h.idx[i] }
func (h *leafHeap) Push(x any)    { h.idx = append(h.idx, x.(int32)) }
func (h *leafHeap) Pop() any {
	x := h.idx[len(h.idx)-1]
	h.idx = h.idx[:len(h.idx)-1]
	return x
}

// evictSide evicts side-branch headers down to sideTarget, with newTip
// about to become the best tip (the current best chain, s.best, is kept
// too). Nodes from firstNew on are the batch being connected: their
// records are in s.pending, not yet in the file. The file is rewritten
// without the evicted records before memory changes; on failure nothing
// changed (the caller drops the batch). It returns the new index of every
// node (-1: evicted) and the number evicted. Called with mu held.
func (s *Store) evictSide(firstNew, newTip int32) ([]int32, int, error) {
	n := int32(s.nodes.len())
	state := make([]int8, n)
	for i := newTip; i != noParent; i = s.nodes.at(i).parent {
		if state[i] == guardedNode {
			break // the rest is the old best chain, guarded below
		}
		state[i] = guardedNode
	}
	for _, i := range s.best {
		state[i] = guardedNode
	}
	// Side headers after the batch: all but the new best chain's (the
	// old best chain's above the fork count, though they stay).
	side := int(n) - int(s.nodes.at(newTip).height) - 1
	children := make(map[int32]int32)
	for i := int32(1); i < n; i++ {
		if state[i] != sideNode {
			continue
		}
		children[i] += 0 // every side node is a key: a leaf has count 0
		if p := s.nodes.at(i).parent; state[p] == sideNode {
			children[p]++
		}
	}
	h := &leafHeap{nodes: &s.nodes}
	for i, c := range children {
		if c == 0 {
			h.idx = append(h.idx, i)
		}
	}
	heap.Init(h)
	evicted := 0
	for side-evicted > s.sideTarget() && h.Len() > 0 {
		i := heap.Pop(h).(int32)
		state[i] = evictedNode
		evicted++
		if p := s.nodes.at(i).parent; state[p] == sideNode {
			if children[p]--; children[p] == 0 {
				heap.Push(h, p)
			}
		}
	}
	remap := make([]int32, n)
	next := int32(0)
	for i := range remap {
		if state[i] == evictedNode {
			remap[i] = -1
			continue
		}
		remap[i] = next
		next++
	}
	if evicted == 0 {
		return remap, 0, nil
	}
	f, size, err := s.rewrite(firstNew, remap)
	if f == nil {
		return nil, 0, err
	}
	// From here on the new file is the store's (err, if any, is a failed
	// fsync of the directory after the rename: reported, not undone).
	old := s.f
	s.f, s.size = f, size
	_ = old.Close() // the file it names was replaced

	// Renumber in place: a kept node only moves down, and its parent
	// before it.
	for i := int32(0); i < n; i++ {
		j := remap[i]
		if j < 0 {
			continue
		}
		nd := *s.nodes.at(i)
		if nd.parent != noParent {
			nd.parent = remap[nd.parent]
		}
		*s.nodes.at(j) = nd
	}
	s.nodes.truncate(next)
	s.nodes.chunks = s.nodes.chunks[:(int(next)+1<<chunkBits-1)>>chunkBits]
	for h, i := range s.best {
		s.best[h] = remap[i]
	}
	s.index = newHashIndex(int(next) + 2*wire.MaxBlockHeadersPerMsg)
	for i := int32(0); i < next; i++ {
		s.index.insert(&s.nodes, i)
	}
	s.memo = walkMemo{}
	s.pending = s.pending[:0]
	return remap, evicted, err
}

// rewrite writes a new headers.dat holding the records of the nodes remap
// keeps (the old file's up to firstNew, then s.pending's), atomically, and
// returns it open with its size. A nil file means nothing changed; a file
// with an error means the rename happened but the directory's fsync
// failed.
func (s *Store) rewrite(firstNew int32, remap []int32) (*os.File, int64, error) {
	tmp := s.path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, 0, fmt.Errorf("headers: create %s: %w", tmp, err)
	}
	fail := func(err error) (*os.File, int64, error) {
		f.Close()
		os.Remove(tmp)
		return nil, 0, err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	size := int64(fileHeaderLen)
	if _, err := w.Write(encodeFileHeader(s.net.Params.Net, s.net.Params.GenesisHash)); err != nil {
		return fail(fmt.Errorf("headers: write %s: %w", tmp, err))
	}
	stored := min(firstNew, int32(len(remap)))
	br := bufio.NewReaderSize(io.NewSectionReader(s.f, fileHeaderLen, int64(stored)*recordLen), 1<<20)
	rec := make([]byte, recordLen)
	for i := int32(0); i < int32(len(remap)); i++ {
		if i < stored {
			if _, err := io.ReadFull(br, rec); err != nil {
				return fail(fmt.Errorf("headers: read %s record %d: %w", s.path, i, err))
			}
			if !recordOK(rec) {
				return fail(&CorruptError{Path: s.path, Offset: recordOffset(i),
					Reason: fmt.Sprintf("record %d changed on disk (checksum)", i)})
			}
		} else {
			p := int64(i-firstNew) * recordLen
			copy(rec, s.pending[p:p+recordLen])
		}
		if remap[i] < 0 {
			continue
		}
		if _, err := w.Write(rec); err != nil {
			return fail(fmt.Errorf("headers: write %s: %w", tmp, err))
		}
		size += recordLen
	}
	if err := w.Flush(); err != nil {
		return fail(fmt.Errorf("headers: write %s: %w", tmp, err))
	}
	if err := s.sync(f); err != nil {
		return fail(fmt.Errorf("headers: sync %s: %w", tmp, err))
	}
	if err := os.Rename(tmp, s.path); err != nil {
		return fail(fmt.Errorf("headers: rename %s: %w", tmp, err))
	}
	if err := syncDir(filepath.Dir(s.path)); err != nil {
		// The rename happened: the new file is the store's now.
		return f, size, err
	}
	return f, size, nil
}
