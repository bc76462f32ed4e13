package wallet

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/btcsuite/btcwallet/waddrmgr"
	"github.com/btcsuite/btcwallet/walletdb"
)

// Receive hands out receive addresses as Bitcoin Core's getnewaddress
// does: the next address of a receive branch that was neither paid nor
// handed out before, recorded as handed out so the next call gives the
// next one (the record survives restarts: bucket handed-out).
//
// The gap limit. A wallet restored from its key (an xpub, a descriptor)
// finds payments by deriving addresses in order until it meets gap-limit
// unused ones in a row (BIP44: 20); it cannot know which were handed out.
// So Receive refuses, with ErrGapLimit, to hand out the address at the
// index past the last paid one plus the gap limit (with a gap of 20 and
// no payment: indexes 0..19, then a refusal), unless asked to go beyond:
// then the address is handed out and watched (this wallet finds a payment
// to it), and the refusal's reason holds: another wallet restored from
// the same key with that gap limit would not. A payment to any handed-out
// address moves the limit on.
//
// The filter covers what Receive hands out. Handing out index i moves the
// branch's frontier as a payment to i would (the gap and the lookahead
// reserve beyond it, see ensureGap): the filters hold the handed-out
// address already when it is within the reserve they hold (the common
// case), and the addresses derived to keep the reserve join them at the
// node's next scheduled reload, neither when the address is handed out
// nor when it is paid (a reload right after either would tell the peer
// the match was real).

// ErrGapLimit is returned by Receive when the next receive address would
// be past the gap limit from the last paid one.
var ErrGapLimit = errors.New("wallet: next receive address past the gap limit")

// ErrNoReceiveBranch is returned by Receive when the wallet has no
// receive branch to hand out from (single addresses only, or a
// descriptor of the change branch), or when From names none.
var ErrNoReceiveBranch = errors.New("wallet: no receive branch")

// ErrAmbiguousSource is returned by Receive when the wallet has several
// receive branches and From names none of them.
var ErrAmbiguousSource = errors.New("wallet: several accounts or descriptors: choose one")

// bktHandedOut is the nested bucket of ownNS holding, per receive branch,
// the index after the last address Receive handed out.
var bktHandedOut = []byte("handed-out")

// ReceiveOptions selects what Receive hands out.
type ReceiveOptions struct {
	// From names the account or descriptor: a descriptor's checksum
	// (with or without '#'), or an HD account as its scope and waddrmgr
	// account number ("m/84'/1'/0", as ReceiveInfo.From prints it).
	// Empty: the wallet's only receive branch.
	From string
	// BeyondGap hands the address out even past the gap limit (see
	// ErrGapLimit).
	BeyondGap bool
}

// ReceiveInfo is an address Receive handed out.
type ReceiveInfo struct {
	Address string `json:"address"`
	Kind    Kind   `json:"kind"`
	// From is the account ("m/84'/1'/0") or descriptor checksum it
	// belongs to; Descriptor the checksum of the descriptor that watches
	// it, if any.
	From       string `json:"from"`
	Descriptor string `json:"descriptor,omitempty"`
	// Index is its index on the receive branch, Path its full
	// derivation path when known (see AddressInfo.Path).
	Index uint32 `json:"index"`
	Path  string `json:"path,omitempty"`
	// Unpaid counts the addresses of the branch handed out and not paid
	// after the last paid one, this one included; GapLimit is the
	// branch's gap limit. BeyondGap is set when Unpaid exceeds it.
	Unpaid    uint32 `json:"unpaid"`
	GapLimit  uint32 `json:"gap_limit"`
	BeyondGap bool   `json:"beyond_gap,omitempty"`
}

// receiveSource is one receive branch Receive can hand out from.
type receiveSource struct {
	key  branchKey
	msig bool
	// id is how From names it; desc the checksum of its descriptor.
	id   string
	desc string
}

// handedKey is the handed-out record's key of a branch: a flag (1 for a
// multisig descriptor's), the scope, the account and the branch.
func handedKey(key branchKey, msig bool) []byte {
	b := make([]byte, 0, 17)
	if msig {
		b = append(b, 1)
	} else {
		b = append(b, 0)
	}
	b = binary.BigEndian.AppendUint32(b, key.scope.Purpose)
	b = binary.BigEndian.AppendUint32(b, key.scope.Coin)
	b = binary.BigEndian.AppendUint32(b, key.account)
	return binary.BigEndian.AppendUint32(b, key.branch)
}

// handedOut returns the index after the last address of a branch Receive
// handed out (0: none).
func handedOut(own walletdb.ReadBucket, key branchKey, msig bool) (uint32, error) {
	bkt := own.NestedReadBucket(bktHandedOut)
	if bkt == nil {
		return 0, nil
	}
	v := bkt.Get(handedKey(key, msig))
	switch {
	case v == nil:
		return 0, nil
	case len(v) != 4:
		return 0, fmt.Errorf("%w: handed-out record of %d bytes", ErrCorrupt, len(v))
	}
	return binary.BigEndian.Uint32(v), nil
}

// receiveSources lists the wallet's receive branches: the HD accounts'
// (by scope and account) and the ranged multisig descriptors'.
func (w *Wallet) receiveSources(b readBuckets) ([]receiveSource, error) {
	owners, err := readDescriptorOwners(b)
	if err != nil {
		return nil, err
	}
	var out []receiveSource
	for key, n := range w.watch.derived {
		if key.branch != waddrmgr.ExternalBranch || n == 0 {
			continue
		}
		out = append(out, receiveSource{
			key:  key,
			id:   fmt.Sprintf("%s/%d", scopeString(key.scope), key.account),
			desc: owners.branches[key],
		})
	}
	for key := range w.watch.msig {
		if key.branch != waddrmgr.ExternalBranch {
			continue
		}
		sum := owners.branches[key]
		out = append(out, receiveSource{key: key, msig: true, id: sum, desc: sum})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].id < out[j].id })
	return out, nil
}

// pickSource returns the receive branch from names (see
// ReceiveOptions.From).
func pickSource(sources []receiveSource, from string) (receiveSource, error) {
	ids := make([]string, 0, len(sources))
	for _, s := range sources {
		ids = append(ids, s.id)
	}
	list := strings.Join(ids, ", ")
	if len(sources) == 0 {
		return receiveSource{}, inputErr("wallet", "", fmt.Errorf("%w: it watches no HD account or ranged descriptor with a receive branch", ErrNoReceiveBranch))
	}
	if from == "" {
		if len(sources) == 1 {
			return sources[0], nil
		}
		return receiveSource{}, inputErr("from", "", fmt.Errorf("%w: %s", ErrAmbiguousSource, list))
	}
	want := strings.TrimPrefix(strings.TrimSpace(from), "#")
	for _, s := range sources {
		if s.id == want || s.desc != "" && s.desc == want {
			return s, nil
		}
	}
	return receiveSource{}, inputErr("from", from, fmt.Errorf("%w named so; the wallet's receive branches: %s", ErrNoReceiveBranch, list))
}

// branchEntries returns the watched addresses of one branch by index.
func (w *Wallet) branchEntries(key branchKey, msig bool) map[uint32]*watchEntry {
	out := map[uint32]*watchEntry{}
	for _, e := range w.watch.scripts {
		r := e.ref
		if !r.imported && r.msig == msig && r.scope == key.scope && r.account == key.account && r.branch == key.branch {
			out[r.index] = e
		}
	}
	return out
}

// Receive hands out the next receive address of an account or
// descriptor (see the comment above ErrGapLimit) and commits. A refusal
// (ErrGapLimit, ErrNoReceiveBranch, ErrAmbiguousSource, as *InputError)
// writes nothing.
func (w *Wallet) Receive(opts ReceiveOptions) (*ReceiveInfo, error) {
	unlock, err := w.enter()
	if err != nil {
		return nil, err
	}
	defer unlock()
	var (
		src     receiveSource
		handed  uint32
		entries map[uint32]*watchEntry
	)
	err = w.view(func(b readBuckets) error {
		sources, err := w.receiveSources(b)
		if err != nil {
			return err
		}
		if src, err = pickSource(sources, opts.From); err != nil {
			return err
		}
		handed, err = handedOut(b.own, src.key, src.msig)
		return err
	})
	if err != nil {
		return nil, err
	}
	entries = w.branchEntries(src.key, src.msig)
	var paid uint32 // the index after the last paid address
	for i, e := range entries {
		if e.used {
			paid = max(paid, i+1)
		}
	}
	next := max(paid, handed)
	gap := w.gapFor(waddrmgr.ExternalBranch)
	info := &ReceiveInfo{From: src.id, Descriptor: src.desc, Index: next, Unpaid: next - paid + 1, GapLimit: gap}
	if next >= paid+gap {
		info.BeyondGap = true
		if !opts.BeyondGap {
			state := fmt.Sprintf("%d addresses are handed out and none is paid yet", next)
			if paid > 0 {
				state = fmt.Sprintf("the %d addresses handed out after the last paid one (index %d) are unpaid", next-paid, paid-1)
			}
			return nil, inputErr("receive", src.id, fmt.Errorf("%w: %s, so index %d would be past the gap limit of %d: a wallet restored from this key with that gap limit would never find a payment to it; reuse one (wallet addresses --unused lists them), wait for a payment, or go beyond the gap on purpose (--beyond-gap)",
				ErrGapLimit, state, next, gap))
		}
	}
	ref := addrRef{msig: src.msig, scope: src.key.scope, account: src.key.account, branch: src.key.branch, index: next}
	err = w.updateNow(func(b buckets) error {
		// Derive through the address if it is past what is watched
		// (beyond the gap), then ahead of it as a payment to it would.
		var err error
		if src.msig {
			_, err = w.msigDeriveThrough(b.own, src.key, next, false)
		} else {
			_, err = w.deriveThrough(b.am, src.key, next, false)
		}
		if err != nil {
			return err
		}
		if _, err := w.ensureGapOf(b, ref, w.synced.Height); err != nil {
			return err
		}
		bkt, err := b.own.CreateBucketIfNotExists(bktHandedOut)
		if err != nil {
			return fmt.Errorf("handed-out bucket: %w", err)
		}
		return bkt.Put(handedKey(src.key, src.msig), binary.BigEndian.AppendUint32(nil, next+1))
	})
	if err != nil {
		return nil, err
	}
	e := w.branchEntries(src.key, src.msig)[next]
	if e == nil {
		return nil, fmt.Errorf("%w: receive address %d of %s not derived", ErrCorrupt, next, src.id)
	}
	info.Address, info.Kind = e.ws.addressOn(w.net.params), e.ws.kind
	if !src.msig {
		if err := w.view(func(b readBuckets) error {
			info.Path, err = w.hdPath(b, src.key, next)
			return err
		}); err != nil {
			return nil, err
		}
	}
	return info, nil
}

// hdPath returns the derivation path of an HD address (AddressInfo.Path).
func (w *Wallet) hdPath(b readBuckets, key branchKey, index uint32) (string, error) {
	owners, err := readDescriptorOwners(b)
	if err != nil {
		return "", err
	}
	acct := branchKey{scope: key.scope, account: key.account}
	prefix, ok := owners.paths[acct]
	if !ok {
		sm, err := w.addrMgr.FetchScopedKeyManager(key.scope)
		if err != nil {
			return "", fmt.Errorf("scope %v: %w", key.scope, err)
		}
		props, err := sm.AccountProperties(b.am, key.account)
		if err != nil {
			return "", fmt.Errorf("account %d of %v: %w", key.account, key.scope, err)
		}
		prefix = accountPath(key.scope, props)
	}
	return fmt.Sprintf("%s/%d/%d", prefix, key.branch, index), nil
}

// handedOutAll returns every branch's handed-out mark, keyed by
// handedKey.
func handedOutAll(own walletdb.ReadBucket) (map[string]uint32, error) {
	out := map[string]uint32{}
	bkt := own.NestedReadBucket(bktHandedOut)
	if bkt == nil {
		return out, nil
	}
	err := bkt.ForEach(func(k, v []byte) error {
		if len(v) != 4 {
			return fmt.Errorf("%w: handed-out record of %d bytes", ErrCorrupt, len(v))
		}
		out[string(k)] = binary.BigEndian.Uint32(v)
		return nil
	})
	return out, err
}
