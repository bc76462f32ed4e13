package wallet

import (
	"bytes"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/txscript"
	"github.com/stretchr/testify/require"
)

// addressOf encodes an output script's address on regtest.
func addressOf(t testing.TB, script []byte) string {
	t.Helper()
	_, addrs, _, err := txscript.ExtractPkScriptAddrs(script, &chaincfg.RegressionNetParams)
	require.NoError(t, err)
	require.Len(t, addrs, 1)
	return addrs[0].EncodeAddress()
}

// hasElement reports whether the filter's data holds e.
func hasElement(t testing.TB, w *Wallet, e []byte) bool {
	t.Helper()
	els, err := w.FilterElements()
	require.NoError(t, err)
	for _, d := range els.Data {
		if bytes.Equal(d, e) {
			return true
		}
	}
	return false
}

func TestReceiveHandsOutInOrderUpToTheGap(t *testing.T) {
	dir := t.TempDir()
	w, err := Create(dir, CreateConfig{Network: "regtest", Xpubs: []string{accountXpub(t, purposeBIP84, 1, versionVpub)}})
	require.NoError(t, err)
	keys := newTestKeys(t, purposeBIP84, 1, &chaincfg.RegressionNetParams)
	for i := range uint32(DefaultGapExternal) {
		info, err := w.Receive(ReceiveOptions{})
		require.NoError(t, err)
		require.Equal(t, i, info.Index)
		require.Equal(t, addressOf(t, keys.p2wpkh(0, i)), info.Address)
		require.Equal(t, KindP2WPKH, info.Kind)
		require.Equal(t, "m/84'/1'/0", info.From)
		require.Equal(t, i+1, info.Unpaid)
		require.False(t, info.BeyondGap)
		require.True(t, strings.HasSuffix(info.Path, "/0/"+strconv.Itoa(int(i))), info.Path)
		// The filter holds a gap's worth of addresses beyond it.
		require.True(t, hasElement(t, w, keys.p2wpkh(0, i+DefaultGapExternal)[2:]))
	}
	// The 21st, with 20 handed out and none paid, is past the gap: the
	// refusal writes nothing, the next call refuses again.
	before, err := w.Addresses()
	require.NoError(t, err)
	for range 2 {
		_, err = w.Receive(ReceiveOptions{})
		require.ErrorIs(t, err, ErrGapLimit)
		require.True(t, IsInputError(err))
		require.NotContains(t, err.Error(), "\n")
	}
	after, err := w.Addresses()
	require.NoError(t, err)
	require.Equal(t, before, after)
	handed := 0
	for _, a := range after {
		if a.HandedOut {
			handed++
			require.False(t, a.Used)
			require.Equal(t, uint32(0), a.Branch)
		}
	}
	require.Equal(t, DefaultGapExternal, handed)

	// Beyond the gap on purpose: index 20, watched.
	info, err := w.Receive(ReceiveOptions{BeyondGap: true})
	require.NoError(t, err)
	require.Equal(t, uint32(DefaultGapExternal), info.Index)
	require.True(t, info.BeyondGap)
	require.True(t, hasElement(t, w, keys.p2wpkh(0, info.Index)[2:]))

	// A payment to handed-out index 5 does not move the next index
	// back; one to index 30, beyond what was handed out (and watched
	// because of it), moves it past 30.
	f := &txFactory{}
	chain := newTestChain(f, 10)
	mustApply(t, w, chain.add(f.tx(nil, output{keys.p2wpkh(0, 5), 1_000})).filtered())
	info, err = w.Receive(ReceiveOptions{})
	require.NoError(t, err)
	require.Equal(t, uint32(DefaultGapExternal+1), info.Index)
	require.Equal(t, uint32(DefaultGapExternal+1-5), info.Unpaid)
	require.True(t, hasElement(t, w, keys.p2wpkh(0, 30)[2:]))
	mustApply(t, w, chain.add(f.tx(nil, output{keys.p2wpkh(0, 30), 2_000})).filtered())
	require.NoError(t, w.Close())

	// The marks survive a restart.
	w, err = Open(dir)
	require.NoError(t, err)
	defer w.Close()
	info, err = w.Receive(ReceiveOptions{})
	require.NoError(t, err)
	require.Equal(t, uint32(31), info.Index)
	require.Equal(t, uint32(1), info.Unpaid)
}

func TestReceiveChoosesTheSource(t *testing.T) {
	c := newTestCosigners(t)
	w, err := Create(t.TempDir(), CreateConfig{
		Network:     "regtest",
		Xpubs:       []string{accountXpub(t, purposeBIP84, 1, versionVpub)},
		Descriptors: []string{c.descriptor()},
	})
	require.NoError(t, err)
	defer w.Close()
	descs, err := w.Descriptors()
	require.NoError(t, err)
	sum := descs[0].Checksum

	_, err = w.Receive(ReceiveOptions{})
	require.ErrorIs(t, err, ErrAmbiguousSource)
	require.Contains(t, err.Error(), sum)
	require.Contains(t, err.Error(), "m/84'/1'/0")
	_, err = w.Receive(ReceiveOptions{From: "nosuch"})
	require.ErrorIs(t, err, ErrNoReceiveBranch)
	require.True(t, IsInputError(err))

	for i := range uint32(3) {
		info, err := w.Receive(ReceiveOptions{From: "#" + sum})
		require.NoError(t, err)
		require.Equal(t, i, info.Index)
		require.Equal(t, sum, info.From)
		require.Equal(t, KindP2WSH, info.Kind)
		want, err := btcutil.NewAddressWitnessScriptHash(c.p2wsh(t, 0, i)[2:], c.params)
		require.NoError(t, err)
		require.Equal(t, want.EncodeAddress(), info.Address)
	}
	info, err := w.Receive(ReceiveOptions{From: "m/84'/1'/0"})
	require.NoError(t, err)
	require.Equal(t, uint32(0), info.Index, "each branch counts on its own")
	addrs := msigAddrs(t, w)
	for i, a := range addrs[0] {
		require.Equal(t, i < 3, a.HandedOut, "index %d", i)
	}
	require.True(t, hasElement(t, w, c.p2wsh(t, 0, 2+DefaultGapExternal)[2:]), "the multisig filter covers what was handed out")
}

func TestReceiveNeedsAReceiveBranch(t *testing.T) {
	w, err := Create(t.TempDir(), CreateConfig{Network: "regtest", Addresses: []string{addressOf(t, foreignScript(7))}})
	require.NoError(t, err)
	defer w.Close()
	_, err = w.Receive(ReceiveOptions{})
	require.ErrorIs(t, err, ErrNoReceiveBranch)
	require.True(t, IsInputError(err))
	// A change-only descriptor has no receive branch either.
	_, err = w.AddDescriptor("wpkh(" + tpub(t, purposeBIP84) + "/1/*)")
	require.NoError(t, err)
	_, err = w.Receive(ReceiveOptions{})
	require.ErrorIs(t, err, ErrNoReceiveBranch)
}

// TestReceiveKeepsTheReserveBeyondHandedOut: addresses handed out by
// Receive move the frontier the lookahead reserve is kept beyond, as a
// payment does (the lookahead reserve of the filter covers what
// receive hands out), and still do after a reopen, where
// the marks are all that records them. The wallet has applied a recent
// block, so no catch-up reserve (1,000 addresses) hides the difference.
func TestReceiveKeepsTheReserveBeyondHandedOut(t *testing.T) {
	const reserve = 30
	f := &txFactory{}
	chain := newTestChain(f, 10)
	clock := WithClock(func() time.Time { return chain.start.Add(3 * time.Hour) })
	dir := t.TempDir()
	w, err := Create(dir, CreateConfig{Network: "regtest", Xpubs: []string{accountXpub(t, purposeBIP84, 1, versionVpub)}},
		WithReserve(reserve), clock)
	require.NoError(t, err)
	keys := newTestKeys(t, purposeBIP84, 1, &chaincfg.RegressionNetParams)
	mustApply(t, w, chain.add().filtered())
	const handOut = 3 * DefaultGapExternal
	last := uint32(handOut - 1)
	// The element the reserve's far end stands for once handOut addresses
	// are handed out: gap and reserve beyond the last of them. Before,
	// the filter ends well short of it.
	far := last + DefaultGapExternal + reserve
	require.False(t, hasElement(t, w, keys.p2wpkh(0, far)[2:]), "index %d watched before anything was handed out", far)
	for i := range uint32(handOut) {
		info, err := w.Receive(ReceiveOptions{BeyondGap: true})
		require.NoError(t, err)
		require.Equal(t, i, info.Index)
	}
	require.True(t, hasElement(t, w, keys.p2wpkh(0, far)[2:]), "index %d: the reserve beyond handed-out %d", far, last)
	require.NoError(t, w.Close())

	w, err = Open(dir, WithReserve(reserve), clock)
	require.NoError(t, err)
	defer w.Close()
	require.True(t, hasElement(t, w, keys.p2wpkh(0, far)[2:]), "after a reopen: index %d", far)
	info, err := w.Receive(ReceiveOptions{BeyondGap: true})
	require.NoError(t, err)
	require.Equal(t, last+1, info.Index)
}
