package wallet

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/btcutil/hdkeychain"
	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/txscript"
	"github.com/btcsuite/btcd/wire"
	"github.com/stretchr/testify/require"
)

// testCosigners are three BIP48 cosigners (m/48'/1'/0'/2', P2WSH) of
// seeds of their own.
type testCosigners struct {
	params *chaincfg.Params
	accts  []*hdkeychain.ExtendedKey // account xpubs
	privs  []*hdkeychain.ExtendedKey // account xprvs
	fps    []uint32                  // master key fingerprints
	keys   []string                  // [fingerprint/48h/1h/0h/2h]tpub
}

func newTestCosigners(t testing.TB) *testCosigners {
	t.Helper()
	c := &testCosigners{params: &chaincfg.RegressionNetParams}
	for i := range 3 {
		seed := sha256.Sum256([]byte(fmt.Sprintf("bloomwatch test cosigner %d", i)))
		m, err := hdkeychain.NewMaster(seed[:], c.params)
		require.NoError(t, err)
		mpub, err := m.ECPubKey()
		require.NoError(t, err)
		fp := btcutil.Hash160(mpub.SerializeCompressed())[:4]
		k := m
		for _, step := range []uint32{48, 1, 0, 2} {
			k, err = k.Derive(hdkeychain.HardenedKeyStart + step)
			require.NoError(t, err)
		}
		pub, err := k.Neuter()
		require.NoError(t, err)
		c.accts = append(c.accts, pub)
		c.privs = append(c.privs, k)
		c.fps = append(c.fps, uint32(fp[0])<<24|uint32(fp[1])<<16|uint32(fp[2])<<8|uint32(fp[3]))
		c.keys = append(c.keys, fmt.Sprintf("[%x/48h/1h/0h/2h]%s", fp, pub.String()))
	}
	return c
}

// descriptor returns wsh(sortedmulti(2, key/<0;1>/*, ...)).
func (c *testCosigners) descriptor() string {
	parts := make([]string, len(c.keys))
	for i, k := range c.keys {
		parts[i] = k + "/<0;1>/*"
	}
	return "wsh(sortedmulti(2," + strings.Join(parts, ",") + "))"
}

// witnessScript returns the 2-of-3 sorted multisig script at
// branch/index, derived here without the wallet.
func (c *testCosigners) witnessScript(t testing.TB, branch, index uint32) []byte {
	t.Helper()
	var keys []*btcutil.AddressPubKey
	for _, a := range c.accts {
		k, err := a.Derive(branch)
		require.NoError(t, err)
		k, err = k.Derive(index)
		require.NoError(t, err)
		pub, err := k.ECPubKey()
		require.NoError(t, err)
		ap, err := btcutil.NewAddressPubKey(pub.SerializeCompressed(), c.params)
		require.NoError(t, err)
		keys = append(keys, ap)
	}
	sort.Slice(keys, func(i, j int) bool { return bytes.Compare(keys[i].ScriptAddress(), keys[j].ScriptAddress()) < 0 })
	ms, err := txscript.MultiSigScript(keys, 2)
	require.NoError(t, err)
	return ms
}

// p2wsh returns the P2WSH output script at branch/index.
func (c *testCosigners) p2wsh(t testing.TB, branch, index uint32) []byte {
	sum := sha256.Sum256(c.witnessScript(t, branch, index))
	s, err := txscript.NewScriptBuilder().AddOp(txscript.OP_0).AddData(sum[:]).Script()
	require.NoError(t, err)
	return s
}

func TestMultisigWalletSyncsGrowsAndReopens(t *testing.T) {
	c := newTestCosigners(t)
	dir := t.TempDir()
	w, err := Create(dir, CreateConfig{Network: "regtest", Descriptors: []string{c.descriptor()}})
	require.NoError(t, err)
	defer func() { _ = w.Close() }()

	// The filter holds one element per address: the 32-byte P2WSH
	// program, no public key.
	els, err := w.FilterElements()
	require.NoError(t, err)
	require.Len(t, els.Data, DefaultGapExternal+DefaultGapInternal)
	want := map[string]bool{}
	for i := range uint32(DefaultGapExternal) {
		want[hex.EncodeToString(c.p2wsh(t, 0, i)[2:])] = true
	}
	for i := range uint32(DefaultGapInternal) {
		want[hex.EncodeToString(c.p2wsh(t, 1, i)[2:])] = true
	}
	for _, e := range els.Data {
		require.Len(t, e, 32)
		require.True(t, want[hex.EncodeToString(e)], "unexpected element %x", e)
	}
	descs, err := w.Descriptors()
	require.NoError(t, err)
	require.Len(t, descs, 1)
	require.Equal(t, KindP2WSH, descs[0].Kind)
	require.Equal(t, 2, descs[0].Threshold)
	require.Equal(t, 3, descs[0].Keys)
	require.Equal(t, []uint32{0, 1}, descs[0].Branches)
	require.Empty(t, descs[0].Scope)

	f := &txFactory{}
	chain := newTestChain(f, 200)
	// Block 200: pays the last watched receive address (the branch
	// grows by a gap; no reserve in the package's tests) and the first
	// change address.
	last := uint32(DefaultGapExternal - 1)
	pay := f.tx(nil, output{c.p2wsh(t, 0, last), 70_000}, output{foreignScript(1), 1_000})
	payChange := f.tx(nil, output{c.p2wsh(t, 1, 0), 5_000})
	res := mustApply(t, w, chain.add(pay, payChange).filtered())
	require.ElementsMatch(t, []string{pay.TxHash().String(), payChange.TxHash().String()},
		[]string{res.Relevant[0].String(), res.Relevant[1].String()})
	// Each branch is derived through index + gap, as an HD account's:
	// receive 19+20, change 0+10.
	recv := last + DefaultGapExternal + 1
	change := uint32(DefaultGapInternal + 1)
	require.Len(t, res.Delta.Data, int(recv+change)-DefaultGapExternal-DefaultGapInternal)
	addrs := msigAddrs(t, w)
	require.Len(t, addrs[0], int(recv))
	require.Len(t, addrs[1], int(change))
	for br, list := range addrs {
		for _, a := range list {
			want, err := btcutil.NewAddressWitnessScriptHash(c.p2wsh(t, br, a.Index)[2:], c.params)
			require.NoError(t, err)
			require.Equal(t, want.EncodeAddress(), a.Address)
		}
	}
	require.True(t, addrs[0][last].Used)
	require.True(t, addrs[1][0].Used)
	require.Equal(t, descs[0].Checksum, addrs[0][last].Descriptor)
	require.Equal(t, KindP2WSH, addrs[0][last].Kind)

	// Block 201: a spend of the receive coin (its witness holds the
	// keys, which no filter element is: it matches by its outpoint) to a
	// foreign script with change to change index 1.
	spend := f.tx([]wire.OutPoint{op(pay, 0)}, output{foreignScript(2), 40_000}, output{c.p2wsh(t, 1, 1), 29_000})
	require.Equal(t, c.p2wsh(t, 0, last), pay.TxOut[0].PkScript, "the payment's wallet output is not its first")
	res = mustApply(t, w, chain.add(spend).filtered())
	require.Equal(t, spend.TxHash(), res.Relevant[0])
	require.Equal(t, int64(29_000-70_000), res.Amounts[spend.TxHash()])
	require.Equal(t, btcutil.Amount(5_000+29_000), mustBalance(t, w).Confirmed)
	els, err = w.FilterElements()
	require.NoError(t, err)
	require.NotContains(t, els.OutPoints, op(pay, 0))
	require.Contains(t, els.OutPoints, op(spend, 1))
	require.NoError(t, w.Flush())

	// Reopen: the derived addresses, their use and the balance persist,
	// without deriving anything again.
	before, err := w.Addresses()
	require.NoError(t, err)
	require.NoError(t, w.Close())
	w, err = Open(dir)
	require.NoError(t, err)
	after, err := w.Addresses()
	require.NoError(t, err)
	require.Equal(t, before, after)
	require.Equal(t, btcutil.Amount(34_000), mustBalance(t, w).Confirmed)

	// The same descriptor again is a duplicate, and changes nothing.
	_, err = w.AddDescriptor(c.descriptor())
	require.ErrorIs(t, err, ErrDuplicate)
	again, err := w.Addresses()
	require.NoError(t, err)
	require.Equal(t, before, again)
}

// msigAddrs returns the multisig addresses of w by branch, in index
// order.
func msigAddrs(t testing.TB, w *Wallet) map[uint32][]AddressInfo {
	t.Helper()
	all, err := w.Addresses()
	require.NoError(t, err)
	out := map[uint32][]AddressInfo{}
	for _, a := range all {
		if a.Kind == KindP2WSH && !a.Imported {
			require.Equal(t, uint32(len(out[a.Branch])), a.Index)
			out[a.Branch] = append(out[a.Branch], a)
		}
	}
	return out
}
