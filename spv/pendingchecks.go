package spv

import (
	"cmp"
	"fmt"
	"path/filepath"
	"slices"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
)

// Unfinished omission checks outlive the process. A block whose check
// still waits (spotcheck.go) was applied as its download peer delivered
// it; if the node stopped and forgot the check, a payment that peer hid
// would stay hidden for good. The blocks of the checks not finished are
// kept in checksFile: those of checks near the header tip (within
// checkWaitDepth, where checks wait for a second peer) whenever the set
// changes, and every unfinished one at Stop. At the next start the
// watcher is rolled back below the lowest of them and the blocks are
// fetched again, each with a second-peer check whatever
// Config.SpotCheckEvery draws: a peer that hid a transaction in one is
// judged against another peer's answer then. A block no longer on the
// best chain is dropped from the record (a reorg replaced it, and the new
// block is checked as any other).

// checksFile is the record of unfinished omission checks in the data dir.
const checksFile = "checks.json"

// checksVersion is checksFile's format version.
const checksVersion = 1

// checksState is checksFile's content.
type checksState struct {
	Version int              `json:"version"`
	Blocks  []uncheckedBlock `json:"blocks"`
}

// uncheckedBlock is a block whose omission check did not finish.
type uncheckedBlock struct {
	Height int32  `json:"height"`
	Hash   string `json:"hash"`
}

// readChecks reads the unfinished checks of an earlier run (none when the
// file does not exist).
func readChecks(dir string) ([]uncheckedBlock, error) {
	var st checksState
	found, err := readState(filepath.Join(dir, checksFile), "unfinished omission checks", &st, &st.Version, checksVersion, ErrCorruptChecks)
	if err != nil || !found {
		return nil, err
	}
	for _, b := range st.Blocks {
		if _, err := chainhash.NewHashFromStr(b.Hash); err != nil || b.Height < 0 {
			return nil, fmt.Errorf("%w: %s: block %d %q", ErrCorruptChecks, filepath.Join(dir, checksFile), b.Height, b.Hash)
		}
	}
	return st.Blocks, nil
}

// loadRechecks reads the unfinished checks of an earlier run and keeps
// those still on the best chain in m.recheck. It returns the lowest of
// their heights at or below watched (the watcher's sync point: blocks it
// applied, to roll back), or -1.
func (m *manager) loadRechecks(watched int32) (int32, error) {
	list, err := readChecks(m.n.cfg.DataDir)
	if err != nil {
		return -1, err
	}
	m.saved, m.savedOnce = list, true
	m.recheck = make(map[int32]chainhash.Hash, len(list))
	low := int32(-1)
	for _, b := range list {
		hash, _ := chainhash.NewHashFromStr(b.Hash)
		if !m.n.store.IsBest(*hash) {
			continue
		}
		m.recheck[b.Height] = *hash
		if b.Height <= watched && (low < 0 || b.Height < low) {
			low = b.Height
		}
	}
	return low, nil
}

// pendingPlans returns the checks not finished: waiting for a second
// peer, or sent and not answered.
func (m *manager) pendingPlans() []*checkPlan {
	var out []*checkPlan
	add := func(p *checkPlan) {
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	for _, p := range m.waiting {
		add(p)
	}
	for ps := range m.peers {
		for _, fr := range ps.fullReqs {
			add(fr.check.plan)
		}
		for _, r := range ps.reqs {
			if r.check != nil && !r.stale {
				add(r.check.plan)
			}
		}
		if ps.cur != nil && ps.cur.req.check != nil {
			add(ps.cur.req.check.plan)
		}
	}
	return out
}

// pruneRechecks forgets the earlier run's unfinished checks whose block
// is no longer on the best chain (a reorg replaced it: the new block is
// checked as any other).
func (m *manager) pruneRechecks() {
	for h, hash := range m.recheck {
		if !m.n.store.IsBest(hash) {
			delete(m.recheck, h)
		}
	}
}

// awaitingChecks counts the blocks awaiting an omission check: checks
// waiting or sent, and blocks of an earlier run's unfinished checks not
// checked again yet. While any is, the node is not synced.
func (m *manager) awaitingChecks() int { return m.awaitingOf(m.pendingPlans()) }

// awaitingOf is awaitingChecks of the pending plans given.
func (m *manager) awaitingOf(plans []*checkPlan) int {
	n := len(m.recheck)
	for _, p := range plans {
		if m.recheck[p.height] != p.hash {
			n++
		}
	}
	return n
}

// saveChecks records the unfinished checks in checksFile when they
// changed since the last write: those near the header tip, or every one
// (all, at Stop). A write that fails is logged; the checks stay in
// memory and the next change writes again.
func (m *manager) saveChecks(all bool) { m.savePlans(all, m.pendingPlans()) }

// savePlans is saveChecks of the pending plans given.
func (m *manager) savePlans(all bool, plans []*checkPlan) {
	_, tip := m.n.store.Tip()
	var list []uncheckedBlock
	add := func(h int32, hash chainhash.Hash) {
		b := uncheckedBlock{Height: h, Hash: hash.String()}
		if !slices.Contains(list, b) {
			list = append(list, b)
		}
	}
	for h, hash := range m.recheck {
		add(h, hash)
	}
	for _, p := range plans {
		if (all || p.height >= tip-checkWaitDepth) && m.n.store.IsBest(p.hash) {
			add(p.height, p.hash)
		}
	}
	slices.SortFunc(list, func(a, b uncheckedBlock) int { return cmp.Compare(a.Height, b.Height) })
	if m.savedOnce && slices.Equal(list, m.saved) {
		return
	}
	if err := writeState(filepath.Join(m.n.cfg.DataDir, checksFile), "unfinished omission checks",
		checksState{Version: checksVersion, Blocks: list}); err != nil {
		m.n.log.Error("unfinished omission checks not recorded: a restart now would not check those blocks again", "err", err)
		return
	}
	m.saved, m.savedOnce = list, true
}
