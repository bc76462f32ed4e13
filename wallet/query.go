package wallet

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/btcutil/hdkeychain"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/txscript"
	"github.com/btcsuite/btcwallet/waddrmgr"
	"github.com/btcsuite/btcwallet/wtxmgr"
)

// Balance is the wallet's balance at its sync point, in satoshis.
//
// Only blocks move Confirmed and Immature: an unconfirmed transaction is
// one peer's word (an SPV node cannot check its inputs), so a coin an
// unconfirmed transaction spends still counts there until the spend
// confirms. The unconfirmed effect is shown beside it: Unconfirmed for what
// is coming in, PendingSpent for what is going out, and Conflicts when
// unconfirmed transactions contradict each other. Total is the worst case
// once everything pending is settled.
type Balance struct {
	// Confirmed is the wallet's mature outputs in blocks that no
	// confirmed transaction spends, whether or not an unconfirmed
	// transaction spends them (see PendingSpent).
	Confirmed btcutil.Amount `json:"confirmed_sat"`
	// Unconfirmed is incoming: the outputs to the wallet of unconfirmed
	// transactions that no other unconfirmed transaction spends,
	// leaving out those of conflicted transactions (see Conflicts), which
	// may never confirm: the worst case.
	Unconfirmed btcutil.Amount `json:"unconfirmed_sat"`
	// Immature is coinbase outputs short of coinbase maturity (spent or
	// not by unconfirmed transactions, like Confirmed).
	Immature btcutil.Amount `json:"immature_sat"`
	// PendingSpent is outgoing: the part of Confirmed and Immature that
	// unconfirmed transactions spend, each coin once even when several
	// conflicting transactions spend it (the worst case: any of them may
	// confirm).
	PendingSpent btcutil.Amount `json:"pending_spent_sat"`
	// Conflicts counts the unconfirmed wallet transactions that spend an
	// outpoint another unconfirmed wallet transaction spends, or descend
	// from one that does. Their outputs are left out of Unconfirmed and
	// the coins they spend are in PendingSpent; the block that confirms
	// one of them evicts the others.
	Conflicts int `json:"conflicts"`
}

// Total returns the worst-case balance once the pending transactions are
// settled: Confirmed + Immature + Unconfirmed - PendingSpent (every
// pending spend confirms, only unconflicted incoming outputs arrive).
// With nothing pending it is Confirmed + Immature. Like every sum of
// amounts in the wallet it holds at the int64 bounds instead of wrapping
// around.
func (b Balance) Total() btcutil.Amount {
	t := addSat(addSat(int64(b.Confirmed), int64(b.Immature)), int64(b.Unconfirmed))
	return btcutil.Amount(subSat(t, int64(b.PendingSpent)))
}

// confirmations returns how many confirmations a block at height has with
// tip as the best height (0 when unmined or above the tip).
func confirmations(height, tip int32) int32 {
	if height < 0 || tip < height {
		return 0
	}
	return tip - height + 1
}

// Balance returns the balances at the sync point (see Balance for what
// unconfirmed transactions change).
func (w *Wallet) Balance() (Balance, error) {
	unlock, err := w.enter()
	if err != nil {
		return Balance{}, err
	}
	defer unlock()
	var bal Balance
	err = w.view(func(b readBuckets) error {
		ps, err := w.readPending(b.tm)
		if err != nil {
			return err
		}
		coins, err := w.readCoins(b.tm, ps)
		if err != nil {
			return err
		}
		bal = w.balanceOf(ps, coins)
		return nil
	})
	if err != nil {
		return Balance{}, fmt.Errorf("balance: %w", err)
	}
	return bal, nil
}

// balanceOf sums the coins readCoins returned into the balances at the
// sync point; ps is the unconfirmed set they were read with.
func (w *Wallet) balanceOf(ps *pendingSet, coins []coin) Balance {
	tip := w.synced.Height
	maturity := int32(w.net.params.CoinbaseMaturity)
	var bal Balance
	add := func(sum *btcutil.Amount, a btcutil.Amount) { *sum = btcutil.Amount(addSat(int64(*sum), int64(a))) }
	for _, c := range coins {
		switch {
		case c.height < 0:
			if len(c.spentBy) == 0 && !c.conflicted {
				add(&bal.Unconfirmed, c.amount)
			}
			continue
		case c.coinbase && confirmations(c.height, tip) < maturity:
			add(&bal.Immature, c.amount)
		default:
			add(&bal.Confirmed, c.amount)
		}
		if len(c.spentBy) > 0 {
			add(&bal.PendingSpent, c.amount)
		}
	}
	for _, p := range ps.txs {
		if p.conflicted {
			bal.Conflicts++
		}
	}
	return bal
}

// TxSummary is one wallet transaction.
type TxSummary struct {
	Txid chainhash.Hash `json:"txid"`
	// Height is the block height, or -1 when unconfirmed.
	Height    int32          `json:"height"`
	BlockHash chainhash.Hash `json:"block_hash"`
	// Time is the block time, or when an unconfirmed transaction entered
	// the wallet's unconfirmed set (first relayed, or returned by a
	// reorg).
	Time time.Time `json:"time"`
	// Delta is the net satoshi change to the wallet.
	Delta int64 `json:"delta_sat"`
	// Confirmations is counted from the wallet's sync point.
	Confirmations int32 `json:"confirmations"`
	// Expires is when an unconfirmed transaction leaves the wallet if
	// it has not confirmed (Time + MempoolExpiry); nil once confirmed.
	Expires *time.Time `json:"expires,omitempty"`
	// Conflicts lists the other unconfirmed wallet transactions that
	// spend an outpoint this unconfirmed one spends: at most one of them
	// can confirm.
	Conflicts []chainhash.Hash `json:"conflicts,omitempty"`
	// Conflicted is set for an unconfirmed transaction with Conflicts or
	// with an unconfirmed ancestor that has some.
	Conflicted bool `json:"conflicted,omitempty"`
}

// ConfirmationsAt returns the confirmations with tip as the best height.
func (t TxSummary) ConfirmationsAt(tip int32) int32 { return confirmations(t.Height, tip) }

// Txs returns the wallet's history: confirmed transactions by height,
// then unconfirmed ones (with their expiry and conflicts).
func (w *Wallet) Txs() ([]TxSummary, error) {
	unlock, err := w.enter()
	if err != nil {
		return nil, err
	}
	defer unlock()
	var out []TxSummary
	err = w.view(func(b readBuckets) error {
		ps, err := w.readPending(b.tm)
		if err != nil {
			return err
		}
		out, err = w.txsIn(b, ps)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("transactions: %w", err)
	}
	return out, nil
}

// txsIn lists the wallet's history for Txs; ps is the unconfirmed set
// read in the same view.
func (w *Wallet) txsIn(b readBuckets, ps *pendingSet) ([]TxSummary, error) {
	tip := w.synced.Height
	mined, err := w.minedHistory(b.tm)
	if err != nil {
		return nil, err
	}
	out := make([]TxSummary, 0, mined.len()+len(ps.txs))
	mined.each(func(m *minedTx) {
		out = append(out, TxSummary{Txid: m.txid, Height: m.height, BlockHash: m.block, Time: m.time,
			Delta: m.delta, Confirmations: confirmations(m.height, tip)})
	})
	err = w.txStore.RangeTransactions(b.tm, noHeight, noHeight, func(details []wtxmgr.TxDetails) (bool, error) {
		for i := range details {
			d := &details[i]
			s := TxSummary{
				Txid:   d.Hash,
				Height: noHeight,
				Time:   d.Received,
				Delta:  netAmount(d),
			}
			if e, ok := w.pending[d.Hash]; ok {
				s.Time = e.seen
			}
			exp := s.Time.Add(MempoolExpiry)
			s.Expires = &exp
			if p, ok := ps.txs[d.Hash]; ok {
				s.Conflicts, s.Conflicted = p.conflicts, p.conflicted
			}
			out = append(out, s)
		}
		return false, nil
	})
	if len(out) == 0 {
		return nil, err
	}
	return out, err
}

// UTXO is one wallet output that no confirmed transaction spends.
type UTXO struct {
	Txid  chainhash.Hash `json:"txid"`
	Index uint32         `json:"vout"`
	// Amount is in satoshis.
	Amount btcutil.Amount `json:"amount_sat"`
	// Height is -1 for an unconfirmed output.
	Height        int32  `json:"height"`
	Confirmations int32  `json:"confirmations"`
	Address       string `json:"address,omitempty"`
	Script        string `json:"script"`
	Coinbase      bool   `json:"coinbase"`
	// PendingSpend is set when unconfirmed wallet transactions (SpentBy)
	// spend the output: it stays listed, and in the confirmed balance,
	// until the spend confirms.
	PendingSpend bool             `json:"pending_spend"`
	SpentBy      []chainhash.Hash `json:"spent_by,omitempty"`
	// Conflicted marks an output of a conflicted unconfirmed transaction
	// (see TxSummary.Conflicted): it may never exist.
	Conflicted bool `json:"conflicted,omitempty"`
}

// UTXOs returns every wallet output no confirmed transaction spends:
// confirmed and unconfirmed ones, including those an unconfirmed
// transaction spends (flagged PendingSpend; wtxmgr hides them). Sum the
// outputs without PendingSpend or Conflicted for the worst case. They are
// ordered by height (unconfirmed last), then txid and index.
func (w *Wallet) UTXOs() ([]UTXO, error) {
	unlock, err := w.enter()
	if err != nil {
		return nil, err
	}
	defer unlock()
	var out []UTXO
	err = w.view(func(b readBuckets) error {
		ps, err := w.readPending(b.tm)
		if err != nil {
			return err
		}
		coins, err := w.readCoins(b.tm, ps)
		if err != nil {
			return err
		}
		out = w.utxosOf(coins)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("unspent outputs: %w", err)
	}
	return out, nil
}

// utxosOf turns the coins readCoins returned into UTXOs, in the order
// UTXOs documents.
func (w *Wallet) utxosOf(coins []coin) []UTXO {
	tip := w.synced.Height
	var out []UTXO // nil without coins, as before
	if len(coins) > 0 {
		out = make([]UTXO, 0, len(coins))
	}
	for _, c := range coins {
		u := UTXO{
			Txid:          c.op.Hash,
			Index:         c.op.Index,
			Amount:        c.amount,
			Height:        c.height,
			Confirmations: confirmations(c.height, tip),
			Script:        hex.EncodeToString(c.pkScript),
			Coinbase:      c.coinbase,
			PendingSpend:  len(c.spentBy) > 0,
			SpentBy:       c.spentBy,
			Conflicted:    c.conflicted,
		}
		if _, addrs, _, err := txscript.ExtractPkScriptAddrs(c.pkScript, w.net.params); err == nil && len(addrs) == 1 {
			u.Address = addrs[0].EncodeAddress()
		}
		out = append(out, u)
	}
	sort.Slice(out, func(i, j int) bool {
		hi, hj := out[i].Height, out[j].Height
		if (hi < 0) != (hj < 0) {
			return hj < 0
		}
		if hi != hj {
			return hi < hj
		}
		if c := bytes.Compare(out[i].Txid[:], out[j].Txid[:]); c != 0 {
			return c < 0
		}
		return out[i].Index < out[j].Index
	})
	return out
}

// Holdings is what Balance, Txs and UTXOs return, read together.
type Holdings struct {
	Balance Balance
	Txs     []TxSummary
	UTXOs   []UTXO
}

// Holdings returns Balance, Txs and UTXOs from one read of the wallet:
// the unconfirmed set and the unspent outputs are read once for the
// three (the sync summary shows them all; three calls read the
// unconfirmed set three times and the unspent outputs twice).
func (w *Wallet) Holdings() (Holdings, error) {
	unlock, err := w.enter()
	if err != nil {
		return Holdings{}, err
	}
	defer unlock()
	var h Holdings
	err = w.view(func(b readBuckets) error {
		ps, err := w.readPending(b.tm)
		if err != nil {
			return err
		}
		coins, err := w.readCoins(b.tm, ps)
		if err != nil {
			return fmt.Errorf("unspent outputs: %w", err)
		}
		h.Balance = w.balanceOf(ps, coins)
		h.UTXOs = w.utxosOf(coins)
		if h.Txs, err = w.txsIn(b, ps); err != nil {
			return fmt.Errorf("transactions: %w", err)
		}
		return nil
	})
	if err != nil {
		return Holdings{}, fmt.Errorf("holdings: %w", err)
	}
	return h, nil
}

// AddressInfo is one watched address or script.
type AddressInfo struct {
	// Address is empty for a raw script no address encodes.
	Address string `json:"address,omitempty"`
	Kind    Kind   `json:"kind"`
	// Imported is true for single addresses and scripts; the HD fields
	// below are zero then.
	Imported bool `json:"imported"`
	// Scope is the HD account's scope ("m/84'/1'"), Account waddrmgr's
	// account number, Branch 0 (receive) or 1 (change). An address of a
	// ranged multisig descriptor has no Scope and no Path (it has a key
	// per cosigner): Account is the descriptor's number (Descriptors'
	// order), Descriptor its checksum.
	Scope   string `json:"scope,omitempty"`
	Account uint32 `json:"account"`
	Branch  uint32 `json:"branch"`
	Index   uint32 `json:"index"`
	Used    bool   `json:"used"`
	// HandedOut marks a receive address Receive handed out that no
	// payment used yet.
	HandedOut bool `json:"handed_out,omitempty"`
	// Path is the full derivation path when the account key's own index
	// is known ("m/84'/1'/0'/0/5"): from the key origin of a descriptor
	// that has one, else from the scope and the key's child number at
	// account depth, or the key's own index at depth 1 ("m/0'/0/5");
	// otherwise the steps above the key are written "?" (see
	// accountPath).
	Path string `json:"path,omitempty"`
	// Element is the filter element, hex.
	Element string `json:"element"`
	// Descriptor is the checksum of the imported descriptor that watches
	// the address (see Descriptors), empty for an xpub or address
	// import.
	Descriptor string `json:"descriptor,omitempty"`
}

// Addresses returns every watched address and script: HD addresses by
// scope, account, branch and index, then imported ones. The addresses and
// their used flags come from the watch set in memory: nothing is derived
// or decoded again. AddressCounts counts them without building the list.
func (w *Wallet) Addresses() ([]AddressInfo, error) {
	unlock, err := w.enter()
	if err != nil {
		return nil, err
	}
	defer unlock()
	var out []AddressInfo
	err = w.view(func(b readBuckets) (err error) {
		out, err = w.addressInfos(b, w.watch.entries())
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("addresses: %w", err)
	}
	return out, nil
}

// addressInfos describes entries, in their order (Addresses' fields).
func (w *Wallet) addressInfos(b readBuckets, entries []*watchEntry) ([]AddressInfo, error) {
	out := make([]AddressInfo, 0, len(entries))
	if len(entries) == 0 {
		return out, nil
	}
	owners, err := readDescriptorOwners(b)
	if err != nil {
		return nil, err
	}
	handed, err := handedOutAll(b.own)
	if err != nil {
		return nil, err
	}
	acctPath := make(map[branchKey]string)
	for _, sm := range sortedScopes(w.addrMgr) {
		err := sm.ForEachAccount(b.am, func(acct uint32) error {
			if acct == waddrmgr.ImportedAddrAccount {
				return nil
			}
			props, err := sm.AccountProperties(b.am, acct)
			if err != nil {
				return err
			}
			id := branchKey{scope: sm.Scope(), account: acct}
			acctPath[id] = accountPath(sm.Scope(), props)
			if p, ok := owners.paths[id]; ok {
				acctPath[id] = p
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	for _, e := range entries {
		info := AddressInfo{
			Address:  e.ws.addressOn(w.net.params),
			Kind:     e.ws.kind,
			Imported: e.ref.imported,
			Used:     e.used,
			Element:  hex.EncodeToString(e.ws.element),
		}
		if !e.used && !e.ref.imported {
			bk := branchKey{e.ref.scope, e.ref.account, e.ref.branch}
			info.HandedOut = e.ref.index < handed[string(handedKey(bk, e.ref.msig))]
		}
		switch {
		case e.ref.imported:
			info.Descriptor = owners.scripts[string(e.ws.pkScript)]
		case e.ref.msig:
			info.Descriptor = owners.branches[branchKey{e.ref.scope, e.ref.account, e.ref.branch}]
			info.Account, info.Branch, info.Index = e.ref.account, e.ref.branch, e.ref.index
		default:
			info.Descriptor = owners.branches[branchKey{e.ref.scope, e.ref.account, e.ref.branch}]
			info.Scope = scopeString(e.ref.scope)
			info.Account, info.Branch, info.Index = e.ref.account, e.ref.branch, e.ref.index
			info.Path = fmt.Sprintf("%s/%d/%d", acctPath[branchKey{scope: e.ref.scope, account: e.ref.account}], e.ref.branch, e.ref.index)
		}
		out = append(out, info)
	}
	return out, nil
}

// AddressCounts counts the watched addresses and scripts, derived and
// imported, used or not, from the watch set in memory: no key is derived
// and nothing is read from the database (2 ms at 100,000 addresses, where
// Addresses, which lists and formats every one, takes 150 ms;
// BenchmarkAddressCounts).
func (w *Wallet) AddressCounts() (AddressCounts, error) {
	unlock, err := w.enter()
	if err != nil {
		return AddressCounts{}, err
	}
	defer unlock()
	return w.watch.counts(), nil
}

// accountPath returns the derivation path of an account key from what the
// key says of itself: at account depth the scope and its own child index
// ("m/84'/1'/0'"); at depth 1 its child index alone, the whole path
// (Electrum's "m/0'"); at depth 0 "m". At another depth only the last step
// is known and the others are written "?" ("m/?/5'"): the scope its
// version implies is not its path.
func accountPath(scope waddrmgr.KeyScope, props *waddrmgr.AccountProperties) string {
	return keyPath(scope, props.AccountPubKey)
}

// keyPath is accountPath of an account key k of scope.
func keyPath(scope waddrmgr.KeyScope, k *hdkeychain.ExtendedKey) string {
	if k == nil {
		return scopeString(scope) + "/?"
	}
	step := childString(k.ChildIndex())
	switch d := k.Depth(); d {
	case 0:
		return "m"
	case accountKeyDepth:
		return scopeString(scope) + "/" + step
	default:
		return "m" + strings.Repeat("/?", int(d)-1) + "/" + step
	}
}

// childString writes a child number as a path step: 5 or 5'.
func childString(c uint32) string {
	if c >= hdkeychain.HardenedKeyStart {
		return fmt.Sprintf("%d'", c-hdkeychain.HardenedKeyStart)
	}
	return fmt.Sprintf("%d", c)
}

// accountKeyDepth is the depth of a BIP44/49/84 account key:
// m/purpose'/coin'/account'.
const accountKeyDepth = 3
