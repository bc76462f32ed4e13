package wallet

import (
	"bytes"
	"fmt"
	"sort"
	"time"

	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/btcutil/hdkeychain"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/txscript"
	"github.com/btcsuite/btcwallet/waddrmgr"
	"github.com/btcsuite/btcwallet/wtxmgr"
)

// Balance is the wallet's balance at its sync point, in satoshis.
type Balance struct {
	// Confirmed is spendable with at least one confirmation, minus what
	// unconfirmed transactions spend.
	Confirmed btcutil.Amount `json:"confirmed"`
	// Unconfirmed is the net of unconfirmed transactions' outputs to the
	// wallet that are still unspent.
	Unconfirmed btcutil.Amount `json:"unconfirmed"`
	// Immature is coinbase outputs short of coinbase maturity.
	Immature btcutil.Amount `json:"immature"`
}

// Total returns every satoshi the wallet holds.
func (b Balance) Total() btcutil.Amount { return b.Confirmed + b.Unconfirmed + b.Immature }

// confirmations returns how many confirmations a block at height has with
// tip as the best height (0 when unmined or above the tip).
func confirmations(height, tip int32) int32 {
	if height < 0 || tip < height {
		return 0
	}
	return tip - height + 1
}

// Balance returns the balances at the sync point, as wtxmgr computes them.
func (w *Wallet) Balance() (Balance, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.usable(); err != nil {
		return Balance{}, err
	}
	tip := w.synced.Height
	var bal Balance
	err := w.view(func(b readBuckets) error {
		confirmed, err := w.txStore.Balance(b.tm, 1, tip)
		if err != nil {
			return err
		}
		all, err := w.txStore.Balance(b.tm, 0, tip)
		if err != nil {
			return err
		}
		credits, err := w.txStore.UnspentOutputs(b.tm)
		if err != nil {
			return err
		}
		maturity := int32(w.net.params.CoinbaseMaturity)
		for _, c := range credits {
			if c.FromCoinBase && confirmations(c.Height, tip) < maturity {
				bal.Immature += c.Amount
			}
		}
		bal.Confirmed, bal.Unconfirmed = confirmed, all-confirmed
		return nil
	})
	if err != nil {
		return Balance{}, fmt.Errorf("balance: %w", err)
	}
	return bal, nil
}

// TxSummary is one wallet transaction.
type TxSummary struct {
	Txid chainhash.Hash `json:"txid"`
	// Height is the block height, or -1 when unconfirmed.
	Height    int32          `json:"height"`
	BlockHash chainhash.Hash `json:"block_hash"`
	// Time is the block time, or when an unconfirmed transaction was
	// first seen.
	Time time.Time `json:"time"`
	// Delta is the net satoshi change to the wallet.
	Delta int64 `json:"delta"`
	// Confirmations is counted from the wallet's sync point.
	Confirmations int32 `json:"confirmations"`
}

// ConfirmationsAt returns the confirmations with tip as the best height.
func (t TxSummary) ConfirmationsAt(tip int32) int32 { return confirmations(t.Height, tip) }

// Txs returns the wallet's history: confirmed transactions by height,
// then unconfirmed ones.
func (w *Wallet) Txs() ([]TxSummary, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.usable(); err != nil {
		return nil, err
	}
	tip := w.synced.Height
	var out []TxSummary
	err := w.view(func(b readBuckets) error {
		return w.txStore.RangeTransactions(b.tm, 0, noHeight, func(details []wtxmgr.TxDetails) (bool, error) {
			for i := range details {
				d := &details[i]
				s := TxSummary{
					Txid:          d.Hash,
					Height:        d.Block.Height,
					Time:          d.Block.Time,
					Delta:         netAmount(d),
					Confirmations: confirmations(d.Block.Height, tip),
				}
				if d.Block.Height >= 0 {
					s.BlockHash = d.Block.Hash
				} else {
					s.Time = d.Received
				}
				out = append(out, s)
			}
			return false, nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("transactions: %w", err)
	}
	return out, nil
}

// UTXO is one unspent wallet output.
type UTXO struct {
	Txid  chainhash.Hash `json:"txid"`
	Index uint32         `json:"vout"`
	// Amount is in satoshis.
	Amount btcutil.Amount `json:"amount"`
	// Height is -1 for an unconfirmed output.
	Height        int32  `json:"height"`
	Confirmations int32  `json:"confirmations"`
	Address       string `json:"address,omitempty"`
	Script        string `json:"script"`
	Coinbase      bool   `json:"coinbase"`
}

// UTXOs returns the unspent outputs wtxmgr reports: confirmed and
// unconfirmed ones, except those an unconfirmed transaction already spends.
// They are ordered by height (unconfirmed last), then txid and index.
func (w *Wallet) UTXOs() ([]UTXO, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.usable(); err != nil {
		return nil, err
	}
	tip := w.synced.Height
	var out []UTXO
	err := w.view(func(b readBuckets) error {
		credits, err := w.txStore.UnspentOutputs(b.tm)
		if err != nil {
			return err
		}
		for _, c := range credits {
			u := UTXO{
				Txid:          c.Hash,
				Index:         c.Index,
				Amount:        c.Amount,
				Height:        c.Height,
				Confirmations: confirmations(c.Height, tip),
				Script:        fmt.Sprintf("%x", c.PkScript),
				Coinbase:      c.FromCoinBase,
			}
			if _, addrs, _, err := txscript.ExtractPkScriptAddrs(c.PkScript, w.net.params); err == nil && len(addrs) == 1 {
				u.Address = addrs[0].EncodeAddress()
			}
			out = append(out, u)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("unspent outputs: %w", err)
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
	return out, nil
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
	// account number, Branch 0 (receive) or 1 (change).
	Scope   string `json:"scope,omitempty"`
	Account uint32 `json:"account"`
	Branch  uint32 `json:"branch"`
	Index   uint32 `json:"index"`
	Used    bool   `json:"used"`
	// Path is the full derivation path when the account key's own index
	// is known ("m/84'/1'/0'/0/5"): from the key origin of a descriptor
	// that has one, else from the scope and the key's child number at
	// account depth; otherwise the scope and the in-account path
	// ("m/84'/1'/?/0/5").
	Path string `json:"path,omitempty"`
	// Element is the filter element, hex.
	Element string `json:"element"`
	// Descriptor is the checksum of the imported descriptor that watches
	// the address (see Descriptors), empty for an xpub or address
	// import.
	Descriptor string `json:"descriptor,omitempty"`
}

// Addresses returns every watched address and script: HD addresses by
// scope, account, branch and index, then imported ones.
func (w *Wallet) Addresses() ([]AddressInfo, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.usable(); err != nil {
		return nil, err
	}
	var out []AddressInfo
	err := w.view(func(b readBuckets) error {
		owners, err := readDescriptorOwners(b)
		if err != nil {
			return err
		}
		used := make(map[string]bool)
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
				return sm.ForEachAccountAddress(b.am, acct, func(ma waddrmgr.ManagedAddress) error {
					used[ma.Address().EncodeAddress()] = ma.Used(b.am)
					return nil
				})
			})
			if err != nil {
				return err
			}
		}
		for _, e := range w.watch.entries() {
			info := AddressInfo{
				Address:  e.ws.address,
				Kind:     e.ws.kind,
				Imported: e.ref.imported,
				Element:  fmt.Sprintf("%x", e.ws.element),
			}
			if e.ref.imported {
				v := b.own.NestedReadBucket(bktImported).Get(e.ws.pkScript)
				if v == nil {
					return fmt.Errorf("%w: imported script %x has no record", ErrCorrupt, e.ws.pkScript)
				}
				r, err := decodeImportedRecord(e.ws.pkScript, v)
				if err != nil {
					return err
				}
				info.Used = r.used
				info.Descriptor = owners.scripts[string(e.ws.pkScript)]
			} else {
				info.Descriptor = owners.branches[branchKey{e.ref.scope, e.ref.account, e.ref.branch}]
				info.Scope = scopeString(e.ref.scope)
				info.Account, info.Branch, info.Index = e.ref.account, e.ref.branch, e.ref.index
				info.Used = used[e.ws.address]
				info.Path = fmt.Sprintf("%s/%d/%d", acctPath[branchKey{scope: e.ref.scope, account: e.ref.account}], e.ref.branch, e.ref.index)
			}
			out = append(out, info)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("addresses: %w", err)
	}
	return out, nil
}

// accountPath returns the derivation path of an account key: the scope and
// the key's own child index when the key sits at account depth.
func accountPath(scope waddrmgr.KeyScope, props *waddrmgr.AccountProperties) string {
	k := props.AccountPubKey
	if k == nil || k.Depth() != accountKeyDepth {
		return scopeString(scope) + "/?"
	}
	idx := k.ChildIndex()
	if idx >= hdkeychain.HardenedKeyStart {
		return fmt.Sprintf("%s/%d'", scopeString(scope), idx-hdkeychain.HardenedKeyStart)
	}
	return fmt.Sprintf("%s/%d", scopeString(scope), idx)
}

// accountKeyDepth is the depth of a BIP44/49/84 account key:
// m/purpose'/coin'/account'.
const accountKeyDepth = 3
