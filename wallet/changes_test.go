package wallet

import (
	"testing"

	"github.com/btcsuite/btcd/wire"
	"github.com/stretchr/testify/require"
)

// changeView is what a live view builds from Changes alone.
type changeView struct {
	cur       ChangeCursor
	last      Change
	addresses map[string]AddressInfo // by element
	utxos     map[wire.OutPoint]UTXO
}

// read applies one Changes call and returns it.
func (v *changeView) read(t *testing.T, w *Wallet) Change {
	t.Helper()
	c, err := w.Changes(&v.cur)
	require.NoError(t, err)
	for _, a := range c.Addresses {
		v.addresses[a.Element] = a
	}
	for _, u := range c.UTXOs {
		v.utxos[wire.OutPoint{Hash: u.Txid, Index: u.Index}] = u
	}
	for _, op := range c.Spent {
		_, ok := v.utxos[op]
		require.True(t, ok, "spent %v was never told", op)
		delete(v.utxos, op)
	}
	v.last = c
	return c
}

// check compares the view with what the wallet's full reads say now:
// every address, every unspent output (confirmations aside: a view counts
// them from the tip), the balance, counts and statistics.
func (v *changeView) check(t *testing.T, w *Wallet, step string) {
	t.Helper()
	addrs, err := w.Addresses()
	require.NoError(t, err)
	require.Len(t, v.addresses, len(addrs), step)
	for _, a := range addrs {
		require.Equal(t, a, v.addresses[a.Element], step)
	}
	utxos, err := w.UTXOs()
	require.NoError(t, err)
	require.Len(t, v.utxos, len(utxos), step)
	for _, u := range utxos {
		got := v.utxos[wire.OutPoint{Hash: u.Txid, Index: u.Index}]
		got.Confirmations = u.Confirmations
		require.Equal(t, u, got, step)
	}
	require.Equal(t, mustBalance(t, w), v.last.Balance, step)
	counts, err := w.AddressCounts()
	require.NoError(t, err)
	require.Equal(t, counts, v.last.Counts, step)
	st, err := w.Stats()
	require.NoError(t, err)
	require.Equal(t, st, v.last.Stats, step)
	require.Equal(t, w.HistoryPoint(), v.last.Synced, step)
}

// TestChangesAreWhatChanged follows a wallet through payments, a spend,
// an unconfirmed payment that then confirms, a reorg and nothing at all,
// with a reader that knows only what Changes told it: at every step it
// holds what the wallet's full reads return, and each Change carries only
// what changed (nothing when nothing did).
func TestChangesAreWhatChanged(t *testing.T) {
	w, keys := newRegtestWallet(t)
	v := &changeView{addresses: map[string]AddressInfo{}, utxos: map[wire.OutPoint]UTXO{}}
	first := v.read(t, w)
	require.NotEmpty(t, first.Addresses, "the first Change holds every address")
	v.check(t, w, "new wallet")
	c := v.read(t, w)
	require.Empty(t, c.Addresses, "nothing changed")
	require.Empty(t, c.UTXOs)
	require.Empty(t, c.Spent)

	f := &txFactory{}
	chain := newTestChain(f, 100)
	fund := f.tx(nil, output{keys.p2wpkh(extBranch, 0), 100_000})
	mustApply(t, w, chain.add(fund, f.tx(nil, output{foreignScript(9), 9})).filtered())
	c = v.read(t, w)
	require.Len(t, c.UTXOs, 1, "the payment")
	require.NotEmpty(t, c.Addresses, "address 0 used, and the gap derived past it")
	require.Less(t, len(c.Addresses), len(first.Addresses), "only what changed")
	v.check(t, w, "paid")

	spend := f.tx([]wire.OutPoint{op(fund, 0)}, output{foreignScript(1), 60_000}, output{keys.p2wpkh(intBranch, 0), 39_000})
	mustApply(t, w, chain.add(spend).filtered())
	c = v.read(t, w)
	require.Equal(t, []wire.OutPoint{op(fund, 0)}, c.Spent)
	require.Len(t, c.UTXOs, 1, "the change output")
	v.check(t, w, "spent")

	pay := f.tx(nil, output{keys.p2wpkh(extBranch, 1), 7_000})
	_, err := w.ApplyMempoolTx(pay)
	require.NoError(t, err)
	c = v.read(t, w)
	require.Len(t, c.UTXOs, 1)
	require.Equal(t, int32(-1), c.UTXOs[0].Height, "unconfirmed")
	v.check(t, w, "unconfirmed payment")

	mustApply(t, w, chain.add(pay).filtered())
	c = v.read(t, w)
	require.Len(t, c.UTXOs, 1, "the payment again, now confirmed")
	require.Positive(t, c.UTXOs[0].Height)
	require.Empty(t, c.Spent)
	v.check(t, w, "confirmed")

	mustRollback(t, w, 100)
	v.read(t, w)
	v.check(t, w, "reorged to 100")

	c = v.read(t, w)
	require.Empty(t, c.Addresses)
	require.Empty(t, c.UTXOs)
	require.Empty(t, c.Spent)

	// A second reader starts from nothing and gets everything.
	other := &changeView{addresses: map[string]AddressInfo{}, utxos: map[wire.OutPoint]UTXO{}}
	other.read(t, w)
	other.check(t, w, "second reader")

	require.NoError(t, w.Close())
	before := v.cur
	_, err = w.Changes(&v.cur)
	require.Error(t, err)
	require.Equal(t, before, v.cur, "a failed read leaves the cursor")
}
