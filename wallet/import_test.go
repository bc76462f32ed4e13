package wallet

import (
	"bytes"
	"errors"
	"testing"

	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/txscript"
	"github.com/btcsuite/btcwallet/walletdb"
	"github.com/stretchr/testify/require"
)

// TestAddAddressesIsAllOrNothing imports a batch in one commit, refuses a
// batch with any bad, repeated or already watched address without
// importing any of it, and rescans once when the wallet had applied
// blocks.
func TestAddAddressesIsAllOrNothing(t *testing.T) {
	w, keys := newRegtestWallet(t)
	dir := w.Dir()
	st, err := w.Stats()
	require.NoError(t, err)
	before := st.Scripts
	batch := benchAddresses(t, 500)

	for _, tc := range []struct {
		name  string
		addrs []string
		want  error
		bad   string
		same  int
	}{
		{"invalid", append(append([]string{}, batch[:3]...), "bcrt1qnotanaddress"), ErrInvalidAddress, "bcrt1qnotanaddress", -1},
		{"other network", append(append([]string{}, batch[:3]...), "bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu"), ErrWrongNetwork, "bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu", -1},
		{"repeated", append(append([]string{}, batch[:3]...), batch[1]), ErrDuplicate, batch[1], 1},
	} {
		_, err := w.AddAddresses(tc.addrs)
		require.ErrorIs(t, err, tc.want, tc.name)
		var ie *InputError
		require.True(t, errors.As(err, &ie), tc.name)
		require.Equal(t, tc.bad, ie.Value, tc.name)
		var le *ListError
		require.True(t, errors.As(err, &le), tc.name)
		require.Equal(t, 3, le.Index, tc.name)
		require.Equal(t, tc.same, le.Same, tc.name)
	}
	st, err = w.Stats()
	require.NoError(t, err)
	require.Equal(t, before, st.Scripts, "nothing imported from a refused batch")

	infos, err := w.AddAddresses(batch)
	require.NoError(t, err)
	require.Len(t, infos, len(batch))
	for i, info := range infos {
		require.Equal(t, batch[i], info.Address)
		require.Equal(t, KindP2WPKH, info.Kind)
		require.False(t, info.Rescan)
	}
	els, err := w.FilterElements()
	require.NoError(t, err)
	require.Len(t, els.Data, before+len(batch))

	// One of them already watched: the whole batch is refused.
	more := benchAddresses(t, 510)[495:]
	_, err = w.AddAddresses(more)
	require.ErrorIs(t, err, ErrDuplicate)
	var le *ListError
	require.True(t, errors.As(err, &le))
	require.Equal(t, ListError{Index: 0, Same: -1, Err: le.Err}, *le, "the first of the list is watched")
	st, err = w.Stats()
	require.NoError(t, err)
	require.Equal(t, before+len(batch), st.Scripts)

	// After a block, a batch rolls the wallet back once.
	f := &txFactory{}
	chain := newTestChain(f, 10)
	mustApply(t, w, chain.add(f.tx(nil, output{keys.p2wpkh(extBranch, 0), 5_000})).filtered())
	infos, err = w.AddAddresses(more[5:])
	require.NoError(t, err)
	for _, info := range infos {
		require.True(t, info.Rescan)
	}
	sp, err := w.SyncedTo()
	require.NoError(t, err)
	require.Equal(t, int32(-1), sp.Height)

	require.NoError(t, w.Close())
	w, err = Open(dir)
	require.NoError(t, err)
	defer w.Close()
	addrs, err := w.Addresses()
	require.NoError(t, err)
	imported := map[string]bool{}
	for _, a := range addrs {
		if a.Imported {
			imported[a.Address] = true
		}
	}
	require.Equal(t, len(batch)+len(more[5:]), len(imported))
	for _, a := range append(batch, more[5:]...) {
		require.True(t, imported[a], a)
	}
}

// TestUsedMarkWritesTheStoredRecord pays an imported address, a raw
// script and an HD address: each one's stored record, rewritten from the
// watch set when it is marked used, is the record it was written as with
// the used flag set, and a reopened wallet reads the same addresses and
// flags back.
func TestUsedMarkWritesTheStoredRecord(t *testing.T) {
	addr, addrScript := benchAddress(t, 3)
	raw := append(append([]byte{txscript.OP_DATA_20}, bytes.Repeat([]byte{0x5a}, 20)...), txscript.OP_DROP, txscript.OP_TRUE)
	dir := t.TempDir()
	w, err := Create(dir, CreateConfig{
		Network:   "regtest",
		Addresses: []string{addr},
		Scripts:   [][]byte{raw},
		Xpubs:     []string{accountXpub(t, purposeBIP84, 1, versionVpub)},
	})
	require.NoError(t, err)
	keys := newTestKeys(t, purposeBIP84, 1, &chaincfg.RegressionNetParams)
	hdScript := keys.p2wpkh(0, 4)

	stored := func() map[string][]byte {
		out := map[string][]byte{}
		require.NoError(t, walletdb.View(w.db, func(tx walletdb.ReadTx) error {
			own := tx.ReadBucket(ownNS)
			if err := own.NestedReadBucket(bktImported).ForEach(func(k, v []byte) error {
				out["imported "+string(k)] = bytes.Clone(v)
				return nil
			}); err != nil {
				return err
			}
			hd := own.NestedReadBucket(bktHDScripts)
			return hd.ForEach(func(bk, _ []byte) error {
				return hd.NestedReadBucket(bk).ForEach(func(k, v []byte) error {
					out["hd "+string(bk)+string(k)] = bytes.Clone(v)
					return nil
				})
			})
		}))
		return out
	}
	before := stored()

	f := &txFactory{}
	chain := newTestChain(f, 1)
	tx := f.tx(nil, output{addrScript, 5_000}, output{raw, 6_000}, output{hdScript, 7_000})
	mustApply(t, w, chain.add(tx).filtered())
	require.NoError(t, w.Flush())
	after := stored()
	changed := 0
	for k, v := range after {
		was, ok := before[k]
		if !ok {
			// Derived for the gap beyond the paid HD address: unused.
			require.Equal(t, byte(0), v[0]&hdFlagUsed, "record %q", k)
			continue
		}
		if bytes.Equal(v, was) {
			continue
		}
		changed++
		// Only the used flag differs: the first byte, from 0 to 1
		// (imported) or with hdFlagUsed set (HD).
		require.Equal(t, before[k][1:], v[1:], "record %q", k)
		require.NotEqual(t, before[k][0], v[0], "record %q", k)
	}
	require.Equal(t, 3, changed, "the three paid scripts' records")
	requireUsedFlagsMatchStore(t, w)
	addrsBefore, err := w.Addresses()
	require.NoError(t, err)
	require.NoError(t, w.Close())

	w, err = Open(dir)
	require.NoError(t, err)
	defer w.Close()
	addrsAfter, err := w.Addresses()
	require.NoError(t, err)
	require.Equal(t, addrsBefore, addrsAfter)
	used := 0
	for _, a := range addrsAfter {
		if a.Used {
			used++
			if a.Imported && a.Kind == KindP2WPKH {
				require.Equal(t, addr, a.Address)
			}
		}
	}
	require.Equal(t, 3, used)
	requireUsedFlagsMatchStore(t, w)
}
