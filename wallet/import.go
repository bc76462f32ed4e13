package wallet

import (
	"fmt"
	"sort"

	"github.com/btcsuite/btcwallet/waddrmgr"
	"github.com/btcsuite/btcwallet/walletdb"
)

// AccountInfo describes an imported HD account.
type AccountInfo struct {
	// Scope is the BIP43 purpose and coin type, as "m/84'/1'".
	Scope string `json:"scope"`
	// Account is waddrmgr's account number inside the scope.
	Account uint32 `json:"account"`
	// Name is the account's name in waddrmgr.
	Name string `json:"name"`
	// Kind is the receive address type.
	Kind Kind `json:"kind"`
	// Depth is the extended key's depth: 3 for a BIP44/49/84 account key.
	Depth uint8 `json:"depth"`
	// Key is the extended public key as imported.
	Key string `json:"key"`
	// Rescan reports that the wallet had applied blocks and was rolled
	// back to its birthday, so the next sync finds the key's history.
	Rescan bool `json:"rescan,omitempty"`
}

// ImportInfo describes an imported address or script.
type ImportInfo struct {
	Address string `json:"address,omitempty"`
	Script  string `json:"script"`
	Kind    Kind   `json:"kind"`
	// Rescan: as in AccountInfo.
	Rescan bool `json:"rescan,omitempty"`
}

// scopeString formats a key scope as a derivation path prefix.
func scopeString(s waddrmgr.KeyScope) string {
	return fmt.Sprintf("m/%d'/%d'", s.Purpose, s.Coin)
}

// accountName is the waddrmgr name of account number n of a scope.
func accountName(n uint32) string { return fmt.Sprintf("watch-%d", n) }

// importAccount stores k as a new watch-only account and derives its first
// gap addresses on both branches.
func (w *Wallet) importAccount(am walletdb.ReadWriteBucket, k *accountKey) (*AccountInfo, error) {
	sm, err := w.addrMgr.FetchScopedKeyManager(k.scope)
	if err != nil {
		// The watch-only manager starts with no scope; each purpose
		// gets its own on first use.
		sm, err = w.addrMgr.NewScopedKeyManager(am, k.scope, k.schema)
		if err != nil {
			return nil, fmt.Errorf("create scope %v: %w", k.scope, err)
		}
	} else {
		var dup bool
		err := sm.ForEachAccount(am, func(acct uint32) error {
			if acct == waddrmgr.ImportedAddrAccount || dup {
				return nil
			}
			props, err := sm.AccountProperties(am, acct)
			if err != nil {
				return err
			}
			dup = props.AccountPubKey != nil && sameKey(props.AccountPubKey, k.key)
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("accounts of %v: %w", k.scope, err)
		}
		if dup {
			return nil, inputErr("xpub", k.key.String(), ErrDuplicate)
		}
	}
	last, err := sm.LastAccount(am)
	if err != nil {
		return nil, fmt.Errorf("accounts of %v: %w", k.scope, err)
	}
	name := accountName(last + 1) // LastAccount is MaxUint32 when empty.
	schema := k.schema
	acct, err := sm.NewAccountWatchingOnly(am, name, k.key, 0, &schema)
	if err != nil {
		return nil, fmt.Errorf("create account in %v: %w", k.scope, err)
	}
	for _, br := range []uint32{waddrmgr.ExternalBranch, waddrmgr.InternalBranch} {
		key := branchKey{k.scope, acct, br}
		w.watch.derived[key] = 0
		if _, err := w.deriveThrough(am, key, w.gapFor(br)-1); err != nil {
			return nil, err
		}
	}
	return &AccountInfo{
		Scope:   scopeString(k.scope),
		Account: acct,
		Name:    name,
		Kind:    k.kind,
		Depth:   k.key.Depth(),
		Key:     k.key.String(),
	}, nil
}

// importScript stores a single address or raw script in the imported
// bucket and watches it.
func (w *Wallet) importScript(own walletdb.ReadWriteBucket, ws *watchedScript) error {
	if w.watch.lookup(ws.pkScript) != nil {
		shown := ws.address
		if shown == "" {
			shown = fmt.Sprintf("%x", ws.pkScript)
		}
		return inputErr("address", shown, ErrDuplicate)
	}
	r := importedRecord{ws: *ws}
	if err := own.NestedReadWriteBucket(bktImported).Put(ws.pkScript, r.encode()); err != nil {
		return fmt.Errorf("store imported script: %w", err)
	}
	w.watch.add(ws, addrRef{imported: true})
	return nil
}

// rescanIfSynced rolls an already synced wallet back to before its first
// block, so the next sync looks for the new key's or address's history.
func (w *Wallet) rescanIfSynced(b buckets) (bool, error) {
	if w.meta.firstApplied == noHeight {
		return false, nil
	}
	return true, w.rollbackIn(b, noHeight)
}

// AddXpub imports an account extended public key (see CreateConfig.Xpubs)
// and commits. If the wallet had applied blocks it is rolled back to
// rescan from its birthday.
func (w *Wallet) AddXpub(xpub string) (*AccountInfo, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.usable(); err != nil {
		return nil, err
	}
	k, err := parseAccountKey(xpub, w.net.params)
	if err != nil {
		return nil, err
	}
	var info *AccountInfo
	err = w.updateNow(func(b buckets) error {
		var err error
		if info, err = w.importAccount(b.am, k); err != nil {
			return err
		}
		info.Rescan, err = w.rescanIfSynced(b)
		return err
	})
	if err != nil {
		return nil, err
	}
	return info, nil
}

// AddAddress watches one more single address and commits. If the wallet
// had applied blocks it is rolled back to rescan from its birthday.
func (w *Wallet) AddAddress(address string) (*ImportInfo, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.usable(); err != nil {
		return nil, err
	}
	ws, err := parseAddress(address, w.net.params)
	if err != nil {
		return nil, err
	}
	return w.addScriptLocked(ws)
}

// AddScript watches one more raw output script and commits. If the wallet
// had applied blocks it is rolled back to rescan from its birthday.
func (w *Wallet) AddScript(script []byte) (*ImportInfo, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.usable(); err != nil {
		return nil, err
	}
	ws, err := parseScript(script, w.net.params)
	if err != nil {
		return nil, err
	}
	return w.addScriptLocked(ws)
}

func (w *Wallet) addScriptLocked(ws *watchedScript) (*ImportInfo, error) {
	info := &ImportInfo{Address: ws.address, Script: fmt.Sprintf("%x", ws.pkScript), Kind: ws.kind}
	err := w.updateNow(func(b buckets) error {
		if err := w.importScript(b.own, ws); err != nil {
			return err
		}
		var err error
		info.Rescan, err = w.rescanIfSynced(b)
		return err
	})
	if err != nil {
		return nil, err
	}
	return info, nil
}

// Accounts returns the imported HD accounts by scope and account number.
func (w *Wallet) Accounts() ([]AccountInfo, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.usable(); err != nil {
		return nil, err
	}
	var out []AccountInfo
	err := w.view(func(b readBuckets) error {
		for _, sm := range sortedScopes(w.addrMgr) {
			var accts []uint32
			if err := sm.ForEachAccount(b.am, func(acct uint32) error {
				if acct != waddrmgr.ImportedAddrAccount {
					accts = append(accts, acct)
				}
				return nil
			}); err != nil {
				return err
			}
			sort.Slice(accts, func(i, j int) bool { return accts[i] < accts[j] })
			for _, acct := range accts {
				props, err := sm.AccountProperties(b.am, acct)
				if err != nil {
					return err
				}
				info := AccountInfo{
					Scope:   scopeString(sm.Scope()),
					Account: acct,
					Name:    props.AccountName,
					Kind:    kindOfAddrType(sm.AddrSchema().ExternalAddrType),
				}
				if props.AddrSchema != nil {
					info.Kind = kindOfAddrType(props.AddrSchema.ExternalAddrType)
				}
				if props.AccountPubKey != nil {
					info.Depth, info.Key = props.AccountPubKey.Depth(), props.AccountPubKey.String()
				}
				out = append(out, info)
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("accounts: %w", err)
	}
	return out, nil
}
