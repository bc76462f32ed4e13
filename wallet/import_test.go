package wallet

import (
	"errors"
	"testing"

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
