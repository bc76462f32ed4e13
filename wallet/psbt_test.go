package wallet

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/btcutil/hdkeychain"
	"github.com/btcsuite/btcd/btcutil/psbt"
	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/mempool"
	"github.com/btcsuite/btcd/txscript"
	"github.com/btcsuite/btcd/wire"
	"github.com/stretchr/testify/require"

	"github.com/bloomwatch/bloomwatch/testnet"
)

// psbtKeyring is the testnet keyring on regtest, the wallets' signer.
func psbtKeyring(t testing.TB) *testnet.Keyring {
	t.Helper()
	k, err := testnet.NewKeyring(testnet.DemoSeed, &chaincfg.RegressionNetParams)
	require.NoError(t, err)
	return k
}

// originKeyOf is the keyring's account key of purpose as a descriptor
// key with its origin ([master fingerprint/purpose h/1h/0h]tpub).
func originKeyOf(t testing.TB, k *testnet.Keyring, purpose uint32) string {
	t.Helper()
	params := k.Params()
	x, err := k.Xpub(purpose)
	require.NoError(t, err)
	ext, err := hdkeychain.NewKeyFromString(x)
	require.NoError(t, err)
	ext, err = ext.CloneWithVersion(params.HDPublicKeyID[:])
	require.NoError(t, err)
	master, err := hdkeychain.NewMaster(testnet.DemoSeed, params)
	require.NoError(t, err)
	pub, err := master.ECPubKey()
	require.NoError(t, err)
	return fmt.Sprintf("[%x/%dh/1h/0h]%s", btcutil.Hash160(pub.SerializeCompressed())[:4], purpose, ext)
}

// signAndVerify signs p with the keyring as a hardware signer would,
// finalizes and extracts it, and runs every input's scripts with btcd's
// script engine against the outputs the PSBT says they spend. It returns
// the signed transaction.
func signAndVerify(t *testing.T, k *testnet.Keyring, p *psbt.Packet) *wire.MsgTx {
	t.Helper()
	require.NoError(t, k.SignPSBT(p))
	require.NoError(t, psbt.MaybeFinalizeAll(p))
	require.True(t, p.IsComplete())
	tx, err := psbt.Extract(p)
	require.NoError(t, err)
	fetcher := txscript.NewMultiPrevOutFetcher(nil)
	prevs := make([]*wire.TxOut, len(tx.TxIn))
	for i, in := range tx.TxIn {
		pin := p.Inputs[i]
		if pin.WitnessUtxo != nil {
			prevs[i] = pin.WitnessUtxo
		} else {
			prevs[i] = pin.NonWitnessUtxo.TxOut[in.PreviousOutPoint.Index]
		}
		fetcher.AddPrevOut(in.PreviousOutPoint, prevs[i])
	}
	hashes := txscript.NewTxSigHashes(tx, fetcher)
	for i := range tx.TxIn {
		vm, err := txscript.NewEngine(prevs[i].PkScript, tx, i, txscript.StandardVerifyFlags, nil, hashes, prevs[i].Value, fetcher)
		require.NoError(t, err)
		require.NoError(t, vm.Execute(), "input %d", i)
	}
	return tx
}

func TestCreatePSBTSignsForEveryScriptType(t *testing.T) {
	// Each kind of wallet receives three coins in three transactions,
	// builds a PSBT that needs two of them with change, and the
	// keyring, knowing only its seeds, finds every key from the PSBT's
	// derivations, signs, and the transaction's scripts run; the fee
	// covers the signed size and the estimate is never below it.
	k := psbtKeyring(t)
	xpub := func(purpose uint32) string {
		x, err := k.Xpub(purpose)
		require.NoError(t, err)
		return x
	}
	msig, err := k.MultisigDescriptor()
	require.NoError(t, err)
	inner := strings.TrimSuffix(strings.TrimPrefix(msig, "wsh("), ")")
	tests := []struct {
		name string
		cfg  CreateConfig
		kind Kind
	}{
		{"p2pkh tpub", CreateConfig{Xpubs: []string{xpub(44)}}, KindP2PKH},
		{"p2sh-p2wpkh upub", CreateConfig{Xpubs: []string{xpub(49)}}, KindP2SHP2WPKH},
		{"p2wpkh vpub", CreateConfig{Xpubs: []string{xpub(84)}}, KindP2WPKH},
		{"p2tr BIP86 account", CreateConfig{TaprootXpubs: []string{xpub(86)}}, KindP2TR},
		{"wpkh() with key origin", CreateConfig{Descriptors: []string{"wpkh(" + originKeyOf(t, k, 84) + "/<0;1>/*)"}}, KindP2WPKH},
		{"tr() with key origin", CreateConfig{Descriptors: []string{"tr(" + originKeyOf(t, k, 86) + "/<0;1>/*)"}}, KindP2TR},
		{"wsh(sortedmulti) 2 of 3", CreateConfig{Descriptors: []string{msig}}, KindP2WSH},
		{"sh(wsh(sortedmulti)) 2 of 3", CreateConfig{Descriptors: []string{"sh(wsh(" + inner + "))"}}, KindP2SHP2WSH},
		{"sh(sortedmulti) 2 of 3", CreateConfig{Descriptors: []string{"sh(" + inner + ")"}}, KindP2SH},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.cfg.Network = "regtest"
			w, err := Create(t.TempDir(), tc.cfg)
			require.NoError(t, err)
			defer w.Close()
			f := &txFactory{}
			chain := newTestChain(f, 500)
			var pays []*wire.MsgTx
			for i, amt := range []int64{300_000, 80_000, 120_000} {
				info, err := w.Receive(ReceiveOptions{})
				require.NoError(t, err)
				require.Equal(t, tc.kind, info.Kind)
				ws, err := parseAddress(info.Address, w.net.params)
				require.NoError(t, err)
				pays = append(pays, f.tx(nil, output{foreignScript(uint32(i)), 7_000}, output{ws.pkScript, amt}))
			}
			mustApply(t, w, chain.add(pays...).filtered())

			res, err := w.CreatePSBT(PSBTRequest{Outputs: []PSBTOutput{{addressOf(t, foreignScript(99)), 350_000}}, FeeRate: 3})
			require.NoError(t, err)
			require.Len(t, res.Inputs, 2, "no single coin covers 350,000 sat: the two largest received transactions")
			require.Equal(t, 2, res.ReceivedTxs)
			var in, out btcutil.Amount
			for _, c := range res.Inputs {
				in += c.Amount
			}
			change := 0
			for _, o := range res.Outputs {
				out += o.Amount
				if o.Change {
					change++
					require.Equal(t, uint32(0), o.Index, "the first change address")
				}
			}
			require.Equal(t, 1, change)
			require.Equal(t, res.Fee, in-out)
			for i, pin := range res.Packet.Inputs {
				if tc.kind != KindP2TR {
					require.NotNil(t, pin.NonWitnessUtxo, "input %d carries its previous transaction", i)
					require.Equal(t, res.Packet.UnsignedTx.TxIn[i].PreviousOutPoint.Hash, pin.NonWitnessUtxo.TxHash())
					require.NotEmpty(t, pin.Bip32Derivation)
				} else {
					require.Len(t, pin.TaprootInternalKey, 32)
					require.Len(t, pin.TaprootBip32Derivation, 1)
				}
				// A key origin gives the master fingerprint and the full
				// path; a bare xpub its own fingerprint and branch/index.
				paths := [][]uint32{}
				for _, d := range pin.Bip32Derivation {
					paths = append(paths, d.Bip32Path)
				}
				for _, d := range pin.TaprootBip32Derivation {
					paths = append(paths, d.Bip32Path)
				}
				for _, p := range paths {
					switch {
					case strings.Contains(tc.name, "multi"):
						require.Len(t, p, 6, "m/48'/1'/0'/2'/branch/index")
					case strings.Contains(tc.name, "origin"):
						require.Len(t, p, 5, "m/purpose'/1'/0'/branch/index")
					default:
						require.Len(t, p, 2, "branch/index from the account key")
					}
				}
			}

			tx := signAndVerify(t, k, res.Packet)
			actual := mempool.GetTxVirtualSize(btcutil.NewTx(tx))
			require.LessOrEqual(t, actual, res.VSize, "the estimate is an upper bound")
			// ...and a close one: signatures are counted at 73 bytes,
			// btcd's are 71 or 72 (low R and S), other signers' up to 73.
			sigs := int64(len(tx.TxIn))
			if strings.Contains(tc.name, "multi") {
				sigs *= 2
			}
			require.LessOrEqual(t, res.VSize-actual, 3*sigs, "and a close one")
			require.GreaterOrEqual(t, float64(res.Fee), math.Ceil(float64(actual)*3))

			// The next PSBT pays change to the next change address.
			res2, err := w.CreatePSBT(PSBTRequest{Outputs: []PSBTOutput{{addressOf(t, foreignScript(98)), 20_000}}, FeeRate: 1})
			require.NoError(t, err)
			require.Len(t, res2.Inputs, 1, "one coin suffices")
			require.Equal(t, btcutil.Amount(80_000), res2.Inputs[0].Amount, "the smallest that does")
			for _, o := range res2.Outputs {
				if o.Change {
					require.Equal(t, uint32(1), o.Index)
				}
			}
			signAndVerify(t, k, res2.Packet)
		})
	}
}

// psbtWallet is a BIP84 wallet of the keyring on regtest with coins:
// received in one transaction paying two of its addresses (150,000 and
// 120,000 sat), one of 200,000 and one of 50,000 sat, confirmed at
// height 600; and, unconfirmed, 400,000 sat.
func psbtWallet(t *testing.T) (*Wallet, *testnet.Keyring, map[string]wire.OutPoint) {
	t.Helper()
	k := psbtKeyring(t)
	x, err := k.Xpub(84)
	require.NoError(t, err)
	w, err := Create(t.TempDir(), CreateConfig{Network: "regtest", Xpubs: []string{x}})
	require.NoError(t, err)
	t.Cleanup(func() { _ = w.Close() })
	script := func(i uint32) []byte {
		s, err := k.PkScript(84, 0, i)
		require.NoError(t, err)
		return s
	}
	f := &txFactory{}
	chain := newTestChain(f, 600)
	both := f.tx(nil, output{script(0), 150_000}, output{script(1), 120_000})
	big := f.tx(nil, output{script(2), 200_000})
	small := f.tx(nil, output{script(3), 50_000})
	mustApply(t, w, chain.add(both, big, small).filtered())
	pending := f.tx(nil, output{script(4), 400_000})
	_, err = w.ApplyMempoolTx(pending)
	require.NoError(t, err)
	return w, k, map[string]wire.OutPoint{
		"150k": op(both, 0), "120k": op(both, 1), "200k": op(big, 0), "50k": op(small, 0), "pending": op(pending, 0),
	}
}

// inputsOf returns the outpoints a PSBT spends.
func inputsOf(res *PSBT) map[wire.OutPoint]bool {
	out := map[wire.OutPoint]bool{}
	for _, in := range res.Packet.UnsignedTx.TxIn {
		out[in.PreviousOutPoint] = true
	}
	return out
}

func TestCoinSelectionAvoidsMergingReceivedTxs(t *testing.T) {
	w, _, coins := psbtWallet(t)
	to := addressOf(t, foreignScript(1))
	pay := func(amt btcutil.Amount, sel CoinSelection) *PSBT {
		t.Helper()
		res, err := w.CreatePSBT(PSBTRequest{Outputs: []PSBTOutput{{to, amt}}, FeeRate: 1, Selection: sel})
		require.NoError(t, err)
		return res
	}
	// One coin suffices: the smallest that does.
	require.Equal(t, map[wire.OutPoint]bool{coins["120k"]: true}, inputsOf(pay(55_000, SelectPrivate)))
	require.Equal(t, map[wire.OutPoint]bool{coins["150k"]: true}, inputsOf(pay(130_000, SelectPrivate)))
	// No single coin: the coins of one received transaction (already
	// linked on chain) before any merge of two.
	res := pay(250_000, SelectPrivate)
	require.Equal(t, map[wire.OutPoint]bool{coins["150k"]: true, coins["120k"]: true}, inputsOf(res))
	require.Equal(t, 1, res.ReceivedTxs)
	// Largest first merges the 200,000 with the 150,000 of another
	// transaction for the same payment.
	res = pay(250_000, SelectLargestFirst)
	require.Equal(t, map[wire.OutPoint]bool{coins["200k"]: true, coins["150k"]: true}, inputsOf(res))
	require.Equal(t, 2, res.ReceivedTxs)
	// More than one cluster holds: the fewest, largest first; the
	// unconfirmed coin is never taken unless asked.
	res = pay(300_000, SelectPrivate)
	require.Equal(t, map[wire.OutPoint]bool{coins["150k"]: true, coins["120k"]: true, coins["200k"]: true}, inputsOf(res))
	require.Equal(t, 2, res.ReceivedTxs)
	res, err := w.CreatePSBT(PSBTRequest{Outputs: []PSBTOutput{{to, 350_000}}, FeeRate: 1, IncludeUnconfirmed: true})
	require.NoError(t, err)
	require.Equal(t, map[wire.OutPoint]bool{coins["pending"]: true}, inputsOf(res))
}

func TestCreatePSBTRefusals(t *testing.T) {
	w, _, _ := psbtWallet(t)
	to := addressOf(t, foreignScript(1))
	tests := []struct {
		name string
		req  PSBTRequest
		want error
	}{
		{"amount above the balance", PSBTRequest{Outputs: []PSBTOutput{{to, 520_001}}, FeeRate: 1}, ErrInsufficientFunds},
		{"amount above the balance with the unconfirmed", PSBTRequest{Outputs: []PSBTOutput{{to, 920_000}}, FeeRate: 1, IncludeUnconfirmed: true}, ErrInsufficientFunds},
		{"fee rate 0", PSBTRequest{Outputs: []PSBTOutput{{to, 1_000}}}, ErrFeeRate},
		{"fee rate below the relay minimum", PSBTRequest{Outputs: []PSBTOutput{{to, 1_000}}, FeeRate: 0.09}, ErrFeeRate},
		{"fee rate of four decimals", PSBTRequest{Outputs: []PSBTOutput{{to, 1_000}}, FeeRate: 0.1234}, ErrFeeRate},
		{"absurd fee rate", PSBTRequest{Outputs: []PSBTOutput{{to, 1_000}}, FeeRate: MaxFeeRate + 1}, ErrFeeRate},
		{"NaN fee rate", PSBTRequest{Outputs: []PSBTOutput{{to, 1_000}}, FeeRate: math.NaN()}, ErrFeeRate},
		{"address of another network", PSBTRequest{Outputs: []PSBTOutput{{"bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4", 1_000}}, FeeRate: 1}, ErrWrongNetwork},
		{"not an address", PSBTRequest{Outputs: []PSBTOutput{{"nope", 1_000}}, FeeRate: 1}, ErrInvalidAddress},
		{"dust", PSBTRequest{Outputs: []PSBTOutput{{to, 293}}, FeeRate: 1}, ErrDustOutput},
		{"negative amount", PSBTRequest{Outputs: []PSBTOutput{{to, -5}}, FeeRate: 1}, ErrDustOutput},
		{"no outputs", PSBTRequest{FeeRate: 1}, ErrNoOutputs},
		{"outputs and a sweep", PSBTRequest{Outputs: []PSBTOutput{{to, 1_000}}, SweepTo: to, FeeRate: 1}, ErrNoOutputs},
		{"from an unknown account", PSBTRequest{Outputs: []PSBTOutput{{to, 1_000}}, FeeRate: 1, From: "m/44'/1'/0"}, ErrInsufficientFunds},
	}
	before, err := w.Addresses()
	require.NoError(t, err)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := w.CreatePSBT(tc.req)
			require.ErrorIs(t, err, tc.want)
			require.True(t, IsInputError(err), "%v", err)
			require.NotContains(t, err.Error(), "\n")
		})
	}
	after, err := w.Addresses()
	require.NoError(t, err)
	require.Equal(t, before, after, "no change address was handed out")
}

func TestCreatePSBTSweep(t *testing.T) {
	w, k, coins := psbtWallet(t)
	to := addressOf(t, foreignScript(1))
	res, err := w.CreatePSBT(PSBTRequest{SweepTo: to, FeeRate: 2})
	require.NoError(t, err)
	require.Equal(t, map[wire.OutPoint]bool{coins["150k"]: true, coins["120k"]: true, coins["200k"]: true, coins["50k"]: true}, inputsOf(res))
	require.Len(t, res.Outputs, 1)
	require.False(t, res.Outputs[0].Change)
	require.Equal(t, btcutil.Amount(520_000)-res.Fee, res.Outputs[0].Amount)
	signAndVerify(t, k, res.Packet)
}

func TestCheckSpend(t *testing.T) {
	w, k, coins := psbtWallet(t)
	res, err := w.CreatePSBT(PSBTRequest{Outputs: []PSBTOutput{{addressOf(t, foreignScript(1)), 100_000}}, FeeRate: 2})
	require.NoError(t, err)
	unsigned := res.Packet.UnsignedTx.Copy()
	tx := signAndVerify(t, k, res.Packet)
	require.NoError(t, w.CheckSpend(tx))

	err = w.CheckSpend(unsigned)
	require.ErrorIs(t, err, ErrTxNotFinal)
	require.True(t, IsInputError(err))

	forged := tx.Copy()
	sig := forged.TxIn[0].Witness[0]
	sig[10] ^= 1
	err = w.CheckSpend(forged)
	require.ErrorIs(t, err, ErrTxInvalid)

	foreign := tx.Copy()
	foreign.TxIn[0].PreviousOutPoint.Index = 7
	err = w.CheckSpend(foreign)
	require.ErrorIs(t, err, ErrNotWalletCoin)
	_ = coins
}

// TestFeeRateFloorAndRounding builds PSBTs at the relay floor of 0.1
// sat/vB (Bitcoin Core's default since 29.1; refused before, when the
// floor was 1) and at fractional rates: each fee is the signed vsize
// times the rate rounded up to a whole satoshi, in integers.
func TestFeeRateFloorAndRounding(t *testing.T) {
	w, _, _ := psbtWallet(t)
	to := addressOf(t, foreignScript(1))
	_, err := w.CreatePSBT(PSBTRequest{Outputs: []PSBTOutput{{to, 30_000}}, FeeRate: MaxFeeRate, DryRun: true})
	require.NoError(t, err, "the ceiling is in range")
	for _, rate := range []float64{MinFeeRate, 0.3, 1.5, 2.123} {
		res, err := w.CreatePSBT(PSBTRequest{Outputs: []PSBTOutput{{to, 30_000}}, FeeRate: rate, DryRun: true})
		require.NoError(t, err, "%v sat/vB", rate)
		require.NotNil(t, res.ChangeGap, "with change: the fee is the rate's, no dust left over")
		kvb := int64(math.Round(rate * 1000))
		fee := int64(res.Fee)
		require.GreaterOrEqual(t, fee*1000, res.VSize*kvb, "%v sat/vB: %d sat for %d vB", rate, fee, res.VSize)
		require.Less(t, (fee-1)*1000, res.VSize*kvb, "%v sat/vB: %d sat for %d vB is more than rounding up", rate, fee, res.VSize)
	}
	require.Equal(t, btcutil.Amount(15), feeAt(141, 100), "141 vB at 0.1 sat/vB")
	require.Equal(t, btcutil.Amount(353), feeAt(141, 2500), "141 vB at 2.5 sat/vB")
}
