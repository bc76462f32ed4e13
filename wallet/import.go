package wallet

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
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
	// ID names the account as --from, ReceiveInfo.From and a PSBT
	// input's From do: the scope and the account number ("m/84'/1'/0").
	// Path is the account key's derivation path ("m/84'/1'/0'", see
	// AddressInfo.Path), which every address path of the account
	// extends.
	ID   string `json:"id"`
	Path string `json:"path"`
	// Name is the account's name in waddrmgr.
	Name string `json:"name"`
	// Kind is the receive address type.
	Kind Kind `json:"kind"`
	// Depth is the extended key's depth: 3 for a BIP44/49/84 account key.
	Depth uint8 `json:"depth"`
	// Key is the extended public key as imported.
	Key string `json:"key"`
	// Rescan reports that the wallet had applied blocks: the next sync
	// rescans from the birthday to find the key's history. Until then
	// the wallet keeps what it found, and RescanPending reports it.
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

// importAccount watches branches of the account key k: a new watch-only
// account, or, when the scope already holds an account of the same key
// (and so the same addresses), the branches of it not watched yet. A
// ranged descriptor covering only the receive branch (KEY/0/*) makes an
// account whose change branch stays underived until a descriptor or an
// xpub for it comes. It derives the first gap addresses of each new
// branch. When every branch is already watched it returns ErrDuplicate,
// unwrapped: the caller names the input. fingerprint is the master key
// fingerprint waddrmgr records (0 when unknown).
func (w *Wallet) importAccount(am walletdb.ReadWriteBucket, k *accountKey, branches []uint32, fingerprint uint32) (*AccountInfo, error) {
	sm, err := w.addrMgr.FetchScopedKeyManager(k.scope)
	acct, name, found := uint32(0), "", false
	if err != nil {
		// The watch-only manager starts with no scope; each purpose
		// gets its own on first use.
		sm, err = w.addrMgr.NewScopedKeyManager(am, k.scope, k.schema)
		if err != nil {
			return nil, fmt.Errorf("create scope %v: %w", k.scope, err)
		}
	} else {
		err := sm.ForEachAccount(am, func(n uint32) error {
			if n == waddrmgr.ImportedAddrAccount || found {
				return nil
			}
			props, err := sm.AccountProperties(am, n)
			if err != nil {
				return err
			}
			if props.AccountPubKey != nil && sameKey(props.AccountPubKey, k.key) {
				acct, name, found = n, props.AccountName, true
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("accounts of %v: %w", k.scope, err)
		}
	}
	if found {
		var missing []uint32
		for _, br := range branches {
			if w.watch.derived[branchKey{k.scope, acct, br}] == 0 {
				missing = append(missing, br)
			}
		}
		if len(missing) == 0 {
			return nil, ErrDuplicate
		}
		branches = missing
	} else {
		last, err := sm.LastAccount(am)
		if err != nil {
			return nil, fmt.Errorf("accounts of %v: %w", k.scope, err)
		}
		name = accountName(last + 1) // LastAccount is MaxUint32 when empty.
		schema := k.schema
		if acct, err = sm.NewAccountWatchingOnly(am, name, k.key, fingerprint, &schema); err != nil {
			return nil, fmt.Errorf("create account in %v: %w", k.scope, err)
		}
	}
	for _, br := range branches {
		key := branchKey{k.scope, acct, br}
		w.watch.derived[key] = 0
		if _, err := w.deriveThrough(am, key, w.gapFor(br)-1, false); err != nil {
			return nil, err
		}
		if _, err := w.keepReserve(key, w.hdBranch(am, key), w.synced.Height, 0); err != nil {
			return nil, err
		}
	}
	return &AccountInfo{
		Scope:   scopeString(k.scope),
		Account: acct,
		ID:      fmt.Sprintf("%s/%d", scopeString(k.scope), acct),
		Path:    keyPath(k.scope, k.key),
		Name:    name,
		Kind:    k.kind,
		Depth:   k.key.Depth(),
		Key:     k.key.String(),
	}, nil
}

// bothBranches are the branches an account extended public key covers.
var bothBranches = []uint32{waddrmgr.ExternalBranch, waddrmgr.InternalBranch}

// importXpub imports an account key given as an xpub: both branches,
// an InputError naming the key when it is already watched.
func (w *Wallet) importXpub(am walletdb.ReadWriteBucket, k *accountKey) (*AccountInfo, error) {
	info, err := w.importAccount(am, k, bothBranches, 0)
	if errors.Is(err, ErrDuplicate) {
		return nil, inputErr("xpub", k.key.String(), ErrDuplicate)
	}
	return info, err
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
	w.watch.add(ws, addrRef{imported: true}, false)
	return nil
}

// importScripts imports many scripts (see importScript) in the order of
// their script bytes, the imported bucket's key order: bbolt keeps the
// pages a write transaction touches in memory as sorted arrays and splits
// them only at commit, so keys inserted in random order cost a move of
// half the array each, quadratic in one transaction (13 s for 100,000
// addresses), while keys in order are appended (half a second). The caller's
// slice is not reordered.
func (w *Wallet) importScripts(own walletdb.ReadWriteBucket, scripts []*watchedScript) error {
	sorted := slices.Clone(scripts)
	slices.SortFunc(sorted, func(a, b *watchedScript) int { return bytes.Compare(a.pkScript, b.pkScript) })
	for _, ws := range sorted {
		if err := w.importScript(own, ws); err != nil {
			return err
		}
	}
	return nil
}

// rescanIfSynced marks an already synced wallet for a rescan, so the next
// sync looks for the new key's or address's history from the birthday. It
// changes nothing else: the transactions the wallet found stay confirmed
// at their heights, and the balance stays what those blocks made it, until
// the sync applies the rescan's first block (beginRescanIn). Rolling the
// wallet back here, as it once did, ran wtxmgr's reorg rollback, which
// returns every transaction of the removed blocks to the unconfirmed set:
// history confirmed for months then read as mempool transactions with 0
// confirmations, and the confirmed balance as 0, until the next sync. It
// reports whether a rescan is pending (also when an earlier import left
// one).
func (w *Wallet) rescanIfSynced(b buckets) (bool, error) {
	if w.meta.firstApplied == noHeight {
		return false, nil
	}
	if w.meta.rescanPending {
		return true, nil
	}
	w.meta.rescanPending = true
	return true, writeProgress(b.own, w.meta)
}

// AddXpub imports an account extended public key (see CreateConfig.Xpubs)
// and commits. If the wallet had applied blocks, the next sync rescans
// from its birthday (see RescanPending).
func (w *Wallet) AddXpub(xpub string) (*AccountInfo, error) {
	unlock, err := w.enter()
	if err != nil {
		return nil, err
	}
	defer unlock()
	k, err := parseAccountKey(xpub, w.net.params)
	if err != nil {
		return nil, err
	}
	return w.addAccountLocked(k)
}

// AddTaprootXpub imports the account extended public key of a BIP86
// taproot account (m/86'/coin'/account'), watched on waddrmgr's BIP86
// scope with gap limits like any account, and commits. The key carries
// the network's plain version (xpub, tpub): SLIP-132 has none for
// taproot. The same account can be given as the descriptor
// tr(KEY/<0;1>/*). If the wallet had applied blocks, the next sync rescans
// from its birthday (see RescanPending).
func (w *Wallet) AddTaprootXpub(xpub string) (*AccountInfo, error) {
	unlock, err := w.enter()
	if err != nil {
		return nil, err
	}
	defer unlock()
	k, err := parseTaprootKey(xpub, w.net.params)
	if err != nil {
		return nil, err
	}
	return w.addAccountLocked(k)
}

// addAccountLocked imports an account key and commits. The caller holds
// w.mu.
func (w *Wallet) addAccountLocked(k *accountKey) (*AccountInfo, error) {
	var info *AccountInfo
	err := w.updateNow(func(b buckets) error {
		var err error
		if info, err = w.importXpub(b.am, k); err != nil {
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
// had applied blocks, the next sync rescans from its birthday.
func (w *Wallet) AddAddress(address string) (*ImportInfo, error) {
	unlock, err := w.enter()
	if err != nil {
		return nil, err
	}
	defer unlock()
	ws, err := parseAddress(address, w.net.params)
	if err != nil {
		return nil, err
	}
	return w.addScriptLocked(ws)
}

// AddScript watches one more raw output script and commits. If the wallet
// had applied blocks, the next sync rescans from its birthday.
func (w *Wallet) AddScript(script []byte) (*ImportInfo, error) {
	unlock, err := w.enter()
	if err != nil {
		return nil, err
	}
	defer unlock()
	ws, err := parseScript(script, w.net.params)
	if err != nil {
		return nil, err
	}
	return w.addScriptLocked(ws)
}

// AddAddresses watches several single addresses and commits once, which
// is what importing thousands takes: one call and one commit instead of
// one per address (each AddAddress costs a disk sync, about 4 ms here,
// and a CLI invocation an Open). Every address is checked first: if one
// does not decode, belongs to another network, is repeated in the list
// or already watched, nothing is imported and the error, a *ListError
// wrapping the *InputError, names it and its position in the list. If
// the wallet had applied blocks, the next sync rescans from its
// birthday.
func (w *Wallet) AddAddresses(addresses []string) ([]*ImportInfo, error) {
	unlock, err := w.enter()
	if err != nil {
		return nil, err
	}
	defer unlock()
	scripts := make([]*watchedScript, 0, len(addresses))
	seen := make(map[string]int, len(addresses))
	for i, a := range addresses {
		ws, err := parseAddress(a, w.net.params)
		if err != nil {
			return nil, &ListError{Index: i, Same: -1, Err: err}
		}
		if j, dup := seen[string(ws.pkScript)]; dup {
			return nil, &ListError{Index: i, Same: j, Err: inputErr("address", a, ErrDuplicate)}
		}
		if w.watch.lookup(ws.pkScript) != nil {
			return nil, &ListError{Index: i, Same: -1, Err: inputErr("address", a, ErrDuplicate)}
		}
		seen[string(ws.pkScript)] = i
		scripts = append(scripts, ws)
	}
	infos := make([]*ImportInfo, len(scripts))
	for i, ws := range scripts {
		infos[i] = &ImportInfo{Address: ws.address, Script: fmt.Sprintf("%x", ws.pkScript), Kind: ws.kind}
	}
	err = w.updateNow(func(b buckets) error {
		if err := w.importScripts(b.own, scripts); err != nil {
			return err
		}
		rescan, err := w.rescanIfSynced(b)
		for _, info := range infos {
			info.Rescan = rescan
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return infos, nil
}

// addScriptLocked watches one script and commits. A script already
// watched is refused before any write: a write that fails reloads the whole
// wallet (18.7 ms at 10,000 addresses), which a sync restarted with its
// address list paid once per address. The caller holds w.mu.
func (w *Wallet) addScriptLocked(ws *watchedScript) (*ImportInfo, error) {
	if w.watch.lookup(ws.pkScript) != nil {
		shown := ws.address
		if shown == "" {
			shown = fmt.Sprintf("%x", ws.pkScript)
		}
		return nil, inputErr("address", shown, ErrDuplicate)
	}
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
	unlock, err := w.enter()
	if err != nil {
		return nil, err
	}
	defer unlock()
	var out []AccountInfo
	err = w.view(func(b readBuckets) error {
		owners, err := readDescriptorOwners(b)
		if err != nil {
			return err
		}
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
					ID:      fmt.Sprintf("%s/%d", scopeString(sm.Scope()), acct),
					Path:    accountPath(sm.Scope(), props),
					Name:    props.AccountName,
					Kind:    kindOfAddrType(sm.AddrSchema().ExternalAddrType),
				}
				if props.AddrSchema != nil {
					info.Kind = kindOfAddrType(props.AddrSchema.ExternalAddrType)
				}
				if props.AccountPubKey != nil {
					info.Depth, info.Key = props.AccountPubKey.Depth(), props.AccountPubKey.String()
				}
				if p, ok := owners.paths[branchKey{scope: sm.Scope(), account: acct}]; ok {
					info.Path = p // a descriptor's key origin
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
