package wallet

import (
	"bytes"
	"sort"

	"github.com/bloomwatch/bloomwatch/watch"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/btcsuite/btcwallet/waddrmgr"
)

// addrRef locates a watched script: an HD address by scope, account,
// branch and index, or an imported address or script.
type addrRef struct {
	imported bool
	// msig marks an address of a ranged multisig descriptor: scope is
	// msigScope, account the descriptor's number.
	msig    bool
	scope   waddrmgr.KeyScope
	account uint32
	branch  uint32
	index   uint32
}

// branchKey names one branch of one HD account.
type branchKey struct {
	scope   waddrmgr.KeyScope
	account uint32
	branch  uint32
}

// watchEntry is one watched output script.
type watchEntry struct {
	ws  *watchedScript
	ref addrRef
	// used mirrors the stored used flag (hd-scripts' for an HD address,
	// the imported record's otherwise): set when loaded and by markUsed
	// inside the open batch, rebuilt with the set after a failed write.
	used bool
}

// watchSet is the in-memory index of everything the wallet watches: output
// scripts with their filter elements, and the outpoints whose spends must
// be matched. It mirrors the database and is rebuilt from it on open and
// after any failed write.
type watchSet struct {
	// scripts indexes watched output scripts by their bytes.
	scripts map[string]*watchEntry
	// data holds each distinct filter element once, in watch order.
	data     [][]byte
	dataSeen map[string]struct{}
	// outpoints are the wallet's unspent outputs, confirmed and not,
	// including those an unconfirmed transaction spends: the spend
	// still has to be matched when it confirms.
	outpoints map[wire.OutPoint]struct{}
	// guards are the other inputs of unconfirmed wallet transactions
	// (the outpoints a payer spent to pay the wallet). They are filter
	// elements only, never evidence of relevance: a confirmed
	// transaction spending one double-spends a pending payment, which
	// the wallet can then evict (an SPV wallet cannot know of a conflict
	// it is never sent).
	guards map[wire.OutPoint]struct{}
	// derived counts the addresses derived on each HD branch.
	derived map[branchKey]uint32
	// usedHigh is each HD branch's highest used index + 1 (0: none
	// used); due the end of the indexes the node was told the filter
	// must hold (usedHigh + gap when last reported); branchEls each
	// branch's filter elements by index, to report them due; firstUse
	// the height of each branch's first payment (see reserveFor).
	usedHigh  map[branchKey]uint32
	due       map[branchKey]uint32
	branchEls map[branchKey][][]byte
	firstUse  map[branchKey]int32
	// branches caches the extended key of each HD branch derivation
	// has used (see branchExtKey).
	branches map[branchKey]*branchExt
	// msig are the branches of the ranged multisig descriptors, and
	// msigDescs caches their parsed descriptors by number
	// (descriptor_msig.go).
	msig      map[branchKey]*msigBranch
	msigDescs map[uint32]*watchedDesc
	// version changes whenever data or outpoints change.
	version uint64
	// opList caches outpointList for opListVersion (callers get a
	// copy).
	opList        []wire.OutPoint
	opListVersion uint64
	// log records the element changes since the node last took them.
	log watch.DeltaLog
	// tally counts the entries by origin and use as they are added and
	// marked used (addUsed, setUsed): the counts every batch of events
	// reads, without a pass over every entry.
	tally AddressCounts
}

func newWatchSet() *watchSet {
	return &watchSet{
		scripts:   make(map[string]*watchEntry),
		dataSeen:  make(map[string]struct{}),
		outpoints: make(map[wire.OutPoint]struct{}),
		guards:    make(map[wire.OutPoint]struct{}),
		derived:   make(map[branchKey]uint32),
		usedHigh:  make(map[branchKey]uint32),
		due:       make(map[branchKey]uint32),
		branchEls: make(map[branchKey][][]byte),
		firstUse:  make(map[branchKey]int32),
		branches:  make(map[branchKey]*branchExt),
		msig:      make(map[branchKey]*msigBranch),
		msigDescs: make(map[uint32]*watchedDesc),
		version:   1,
	}
}

// add watches one script, logging its element as a reserve one when
// reserve is set, and reports whether the element set grew.
func (s *watchSet) add(ws *watchedScript, ref addrRef, reserve bool) bool {
	return s.addUsed(ws, ref, false, reserve)
}

// addUsed watches one script whose stored used flag is used and reports
// whether the element set grew.
func (s *watchSet) addUsed(ws *watchedScript, ref addrRef, used, reserve bool) bool {
	key := string(ws.pkScript)
	if _, ok := s.scripts[key]; ok {
		return false
	}
	e := &watchEntry{ws: ws, ref: ref}
	s.scripts[key] = e
	s.tally.add(ref.imported)
	if used {
		s.setUsed(e)
	}
	if !ref.imported {
		bk := branchKey{ref.scope, ref.account, ref.branch}
		els := s.branchEls[bk]
		for len(els) <= int(ref.index) {
			els = append(els, nil)
		}
		els[ref.index] = ws.element
		s.branchEls[bk] = els
		if used {
			s.usedHigh[bk] = max(s.usedHigh[bk], ref.index+1)
		}
	}
	if _, ok := s.dataSeen[string(ws.element)]; ok {
		return false
	}
	s.dataSeen[string(ws.element)] = struct{}{}
	s.data = append(s.data, ws.element)
	if reserve {
		s.log.AddReserve(ws.element)
	} else {
		s.log.AddData(ws.element)
	}
	s.version++
	return true
}

// lookup returns the entry watching pkScript, or nil.
func (s *watchSet) lookup(pkScript []byte) *watchEntry {
	return s.scripts[string(pkScript)]
}

// setOutpoints replaces the outpoint and guard sets, logs how the filter's
// outpoints (the union of both) changed, and reports whether either set
// changed.
func (s *watchSet) setOutpoints(ops, guards map[wire.OutPoint]struct{}) bool {
	same := sameSet(ops, s.outpoints) && sameSet(guards, s.guards)
	if same {
		return false
	}
	in := func(op wire.OutPoint, a, b map[wire.OutPoint]struct{}) bool {
		_, x := a[op]
		_, y := b[op]
		return x || y
	}
	for _, m := range []map[wire.OutPoint]struct{}{ops, guards} {
		for op := range m {
			if !in(op, s.outpoints, s.guards) {
				s.log.AddOutPoint(op)
			}
		}
	}
	for _, m := range []map[wire.OutPoint]struct{}{s.outpoints, s.guards} {
		for op := range m {
			if !in(op, ops, guards) {
				s.log.RemoveOutPoint(op)
			}
		}
	}
	s.outpoints, s.guards = ops, guards
	s.version++
	return true
}

// sameSet reports whether a and b hold the same outpoints.
func sameSet(a, b map[wire.OutPoint]struct{}) bool {
	if len(a) != len(b) {
		return false
	}
	for op := range a {
		if _, ok := b[op]; !ok {
			return false
		}
	}
	return true
}

// spendAndCredit updates the outpoint set for a stored mined transaction
// when no unconfirmed transaction exists: the outpoints it spends leave the
// set, its outputs paying watched scripts join it. It reports whether the
// set changed.
func (s *watchSet) spendAndCredit(tx *wire.MsgTx, txid chainhash.Hash) bool {
	changed := false
	for _, in := range tx.TxIn {
		if _, ok := s.outpoints[in.PreviousOutPoint]; ok {
			delete(s.outpoints, in.PreviousOutPoint)
			if _, guard := s.guards[in.PreviousOutPoint]; !guard {
				s.log.RemoveOutPoint(in.PreviousOutPoint)
			}
			changed = true
		}
	}
	for i, out := range tx.TxOut {
		if s.lookup(out.PkScript) == nil {
			continue
		}
		op := wire.OutPoint{Hash: txid, Index: uint32(i)}
		if _, ok := s.outpoints[op]; !ok {
			s.outpoints[op] = struct{}{}
			if _, guard := s.guards[op]; !guard {
				s.log.AddOutPoint(op)
			}
			changed = true
		}
	}
	if changed {
		s.version++
	}
	return changed
}

// addUnconfirmed updates the outpoint set and guards for an unconfirmed
// wallet transaction just stored, when nothing else in the unconfirmed set
// changed: its outputs paying watched scripts join the outpoints, its
// inputs that spend no wallet coin join the guards. An outpoint it creates
// that was a guard (a child relayed before its parent) becomes a wallet
// coin, which the child now debits. It logs what enters the filter. This
// is refreshPending's result for that one transaction, at the cost of the
// transaction alone.
func (s *watchSet) addUnconfirmed(tx *wire.MsgTx, txid chainhash.Hash) {
	changed := false
	for i, out := range tx.TxOut {
		if s.lookup(out.PkScript) == nil {
			continue
		}
		op := wire.OutPoint{Hash: txid, Index: uint32(i)}
		if _, ok := s.outpoints[op]; ok {
			continue
		}
		s.outpoints[op] = struct{}{}
		if _, guard := s.guards[op]; guard {
			delete(s.guards, op) // still in the filter, now as a coin
		} else {
			s.log.AddOutPoint(op)
		}
		changed = true
	}
	for _, in := range tx.TxIn {
		prev := in.PreviousOutPoint
		if _, coin := s.outpoints[prev]; coin {
			continue
		}
		if _, guard := s.guards[prev]; guard {
			continue
		}
		s.guards[prev] = struct{}{}
		s.log.AddOutPoint(prev)
		changed = true
	}
	if changed {
		s.version++
	}
}

// outpointList returns the watched outpoints and guards, in no particular
// order (a bloom filter does not depend on the order of its insertions);
// the list is kept until the set changes.
func (s *watchSet) outpointList() []wire.OutPoint {
	if s.opList != nil && s.opListVersion == s.version {
		return s.opList
	}
	ops := make([]wire.OutPoint, 0, len(s.outpoints)+len(s.guards))
	for op := range s.guards {
		if _, dup := s.outpoints[op]; !dup {
			ops = append(ops, op)
		}
	}
	for op := range s.outpoints {
		ops = append(ops, op)
	}
	s.opList, s.opListVersion = ops, s.version
	return ops
}

// AddressCounts counts the watched addresses and scripts.
type AddressCounts struct {
	// Derived counts the HD addresses derived (receive and change
	// branches of every account, gap included); DerivedUsed those that
	// received a payment.
	Derived     int `json:"derived"`
	DerivedUsed int `json:"derived_used"`
	// Imported counts the single addresses and raw scripts; ImportedUsed
	// those that received a payment.
	Imported     int `json:"imported"`
	ImportedUsed int `json:"imported_used"`
}

// Used returns how many watched addresses and scripts received a payment.
func (c AddressCounts) Used() int { return c.DerivedUsed + c.ImportedUsed }

// counts returns the entries' counts by origin and use.
func (s *watchSet) counts() AddressCounts { return s.tally }

// setUsed flags a watched entry used, in memory, and counts it.
func (s *watchSet) setUsed(e *watchEntry) {
	if e.used {
		return
	}
	e.used = true
	if e.ref.imported {
		s.tally.ImportedUsed++
	} else {
		s.tally.DerivedUsed++
	}
}

// add counts one more entry, imported or derived.
func (c *AddressCounts) add(imported bool) {
	if imported {
		c.Imported++
	} else {
		c.Derived++
	}
}

// entries returns every watched script: HD addresses by scope, account,
// branch and index, then the multisig descriptors' by descriptor,
// branch and index, then imported scripts by script bytes.
func (s *watchSet) entries() []*watchEntry {
	out := make([]*watchEntry, 0, len(s.scripts))
	for _, e := range s.scripts {
		out = append(out, e)
	}
	return sortEntries(out)
}

// sortEntries sorts watched scripts in entries' order and returns them.
func sortEntries(out []*watchEntry) []*watchEntry {
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i].ref, out[j].ref
		switch {
		case a.imported != b.imported:
			return b.imported
		case a.msig != b.msig:
			return b.msig
		case a.imported:
			return bytes.Compare(out[i].ws.pkScript, out[j].ws.pkScript) < 0
		case a.scope.Purpose != b.scope.Purpose:
			return a.scope.Purpose < b.scope.Purpose
		case a.scope.Coin != b.scope.Coin:
			return a.scope.Coin < b.scope.Coin
		case a.account != b.account:
			return a.account < b.account
		case a.branch != b.branch:
			return a.branch < b.branch
		default:
			return a.index < b.index
		}
	})
	return out
}
