package wallet

import (
	"bytes"
	"github.com/bloomwatch/bloomwatch/internal/unionfind"
	"math"
	"sort"

	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/txscript"
	"github.com/btcsuite/btcd/wire"
)

// Coin selection that leaks less on purpose.
//
// An observer of the chain links the inputs of one transaction as one
// owner's (common-input ownership): spending two coins received in
// different transactions tells it that both payments went to one wallet,
// and clusters every address either touched. Coins received in one
// transaction, or on one address, are linked on chain already: spending
// them together tells nothing new. So the default, SelectPrivate,
//
//  1. spends a single coin when one suffices (the smallest that does),
//  2. else one cluster of coins already linked (received in one
//     transaction or on one address, transitively), spent whole: the
//     smallest that suffices,
//  3. else the fewest clusters of one account or descriptor (largest
//     first), and only when no single source suffices, clusters of
//     several,
//
// where largest-first (SelectLargestFirst, the funding wallets' classic)
// takes coins by value until they cover the payment and merges whatever
// it takes. TestCoinSelectionLeaks measures both with the analyzer's
// transaction-graph clustering.

// CoinSelection is a coin selection policy (see coinselect.go).
type CoinSelection int

const (
	// SelectPrivate avoids merging coins of different received
	// transactions (the default).
	SelectPrivate CoinSelection = iota
	// SelectLargestFirst takes the largest coins first.
	SelectLargestFirst
)

// String names the policy as the CLI takes it.
func (s CoinSelection) String() string {
	if s == SelectLargestFirst {
		return "largest-first"
	}
	return "private"
}

// Sizes of transaction parts, in weight units (BIP141).
const (
	// txOverheadWeight: version, locktime, input and output counts (one
	// byte each up to 252).
	txOverheadWeight = 4 * (4 + 4 + 1 + 1)
	// segwitMarkerWeight: the marker and flag of a transaction with
	// witnesses.
	segwitMarkerWeight = 2
	// inputBaseWeight: outpoint and sequence.
	inputBaseWeight = 4 * (32 + 4 + 4)
	// ecdsaSigLen is an ECDSA signature with its sighash byte, at its
	// longest (a signer need not grind low R).
	ecdsaSigLen = 73
	// schnorrSigLen is a BIP340 signature with SIGHASH_DEFAULT.
	schnorrSigLen = 64
	// compressedKeyLen is a compressed public key.
	compressedKeyLen = 33
)

// varIntLen is the length of a Bitcoin variable-length integer.
func varIntLen(n int) int { return wire.VarIntSerializeSize(uint64(n)) }

// pushLen is the length of a minimal data push of n bytes.
func pushLen(n int) int {
	switch {
	case n < txscript.OP_PUSHDATA1:
		return 1 + n
	case n <= 0xff:
		return 2 + n
	default:
		return 3 + n
	}
}

// multisigThreshold returns k of a multisig script (OP_k ... OP_n
// OP_CHECKMULTISIG, k up to 20).
func multisigThreshold(script []byte) int {
	if len(script) == 0 {
		return 0
	}
	if op := script[0]; op >= txscript.OP_1 && op <= txscript.OP_16 {
		return int(op-txscript.OP_1) + 1
	}
	if len(script) > 1 && script[0] == 1 {
		return int(script[1])
	}
	return 0
}

// inputWeight returns the weight of an input spending pkScript once
// signed, from its signing metadata, and whether it has a witness; ok is
// false for a script whose spending size the wallet cannot know (an
// imported P2SH or P2WSH address without its script).
func inputWeight(pkScript []byte, s *scriptSigning) (weight int64, witness, ok bool) {
	scriptSig := func(n int) int64 { return int64(4 * (varIntLen(n) + n)) }
	switch txscript.GetScriptClass(pkScript) {
	case txscript.PubKeyHashTy:
		return inputBaseWeight + scriptSig(pushLen(ecdsaSigLen)+pushLen(compressedKeyLen)), false, true
	case txscript.WitnessV0PubKeyHashTy:
		return inputBaseWeight + scriptSig(0) + int64(1+pushLen(ecdsaSigLen)+pushLen(compressedKeyLen)), true, true
	case txscript.WitnessV1TaprootTy:
		return inputBaseWeight + scriptSig(0) + int64(1+pushLen(schnorrSigLen)), true, true
	case txscript.WitnessV0ScriptHashTy:
		if s == nil || s.witness == nil {
			return 0, false, false
		}
		return inputBaseWeight + scriptSig(0) + multisigWitness(s.witness), true, true
	case txscript.ScriptHashTy:
		if s == nil || s.redeem == nil {
			return 0, false, false
		}
		if s.witness != nil { // sh(wsh(multi))
			return inputBaseWeight + scriptSig(pushLen(len(s.redeem))) + multisigWitness(s.witness), true, true
		}
		if txscript.IsPayToWitnessPubKeyHash(s.redeem) {
			return inputBaseWeight + scriptSig(pushLen(len(s.redeem))) + int64(1+pushLen(ecdsaSigLen)+pushLen(compressedKeyLen)), true, true
		}
		k := multisigThreshold(s.redeem)
		return inputBaseWeight + scriptSig(1+k*pushLen(ecdsaSigLen)+pushLen(len(s.redeem))), false, true
	}
	return 0, false, false
}

// multisigWitness is the witness of a k-of-n witness script: an empty
// item (CHECKMULTISIG's extra pop), k signatures and the script.
func multisigWitness(ws []byte) int64 {
	k := multisigThreshold(ws)
	return int64(varIntLen(k+2) + 1 + k*pushLen(ecdsaSigLen) + varIntLen(len(ws)) + len(ws))
}

// outputWeight is the weight of an output paying pkScript.
func outputWeight(pkScript []byte) int64 {
	return int64(4 * (8 + varIntLen(len(pkScript)) + len(pkScript)))
}

// spendable is a coin the selection may take, with what it costs.
type spendable struct {
	coin
	weight  int64
	witness bool
	// source names its account or descriptor; cluster is its group of
	// coins already linked on chain.
	source  string
	cluster int
}

// txShape sizes a transaction: its outputs and the inputs chosen.
type txShape struct {
	outputs []*wire.TxOut
	change  []byte // the change output's script
	rate    float64
}

// feeFor returns the fee of a transaction spending ins to the outputs,
// with a change output or not, at the shape's rate (rounded up).
func (t *txShape) feeFor(ins []*spendable, withChange bool) btcutil.Amount {
	outs := t.outputs
	if withChange {
		outs = append(outs[:len(outs):len(outs)], wire.NewTxOut(0, t.change))
	}
	kvb, _ := satPerKvB(t.rate)
	return feeAt(vsizeOf(ins, outs), kvb)
}

// satPerKvB returns a fee rate in sat/vB as a whole number of sat/kvB,
// the unit Bitcoin Core's CFeeRate holds, and whether it is one (at most
// three decimals; 0.1 is 100 sat/kvB though 0.1 has no exact float).
func satPerKvB(rate float64) (int64, bool) {
	kvb := math.Round(rate * 1000)
	return int64(kvb), math.Abs(rate*1000-kvb) < 1e-6
}

// feeAt returns the fee of vsize virtual bytes at kvb sat/kvB, rounded up
// to a whole satoshi in integers (CFeeRate::GetFee): 141 vB at 0.1 sat/vB
// is 15 sat, never 14 and never the 16 a float product can round to.
func feeAt(vsize, kvb int64) btcutil.Amount {
	return btcutil.Amount((vsize*kvb + 999) / 1000)
}

// vsizeOf returns the virtual size of a transaction spending ins to outs
// once signed.
func vsizeOf(ins []*spendable, outs []*wire.TxOut) int64 {
	w := int64(txOverheadWeight)
	witness := false
	for _, in := range ins {
		w += in.weight
		witness = witness || in.witness
	}
	if witness {
		w += segwitMarkerWeight
		// A non-witness input of a witness transaction has an empty
		// witness: one byte.
		for _, in := range ins {
			if !in.witness {
				w++
			}
		}
	}
	for _, o := range outs {
		w += outputWeight(o.PkScript)
	}
	return (w + 3) / 4
}

// covers reports whether ins pay target and their fee without change.
func (t *txShape) covers(ins []*spendable, target btcutil.Amount) bool {
	return sum(ins) >= target+t.feeFor(ins, false)
}

// sum adds the coins' amounts.
func sum(ins []*spendable) btcutil.Amount {
	var s btcutil.Amount
	for _, in := range ins {
		s += in.amount
	}
	return s
}

// clusterCoins assigns each coin its cluster: coins received in one
// transaction or paying one script, transitively.
func clusterCoins(coins []*spendable) {
	sets := unionfind.New(len(coins))
	byTx := map[chainhash.Hash]int{}
	byScript := map[string]int{}
	for i, c := range coins {
		for _, j := range []int{lookupOr(byTx, c.op.Hash, i), lookupOr(byScript, string(c.pkScript), i)} {
			sets.Union(i, j)
		}
	}
	for i, c := range coins {
		c.cluster = sets.Find(i)
	}
}

// lookupOr returns m[k], setting it to v when absent.
func lookupOr[K comparable](m map[K]int, k K, v int) int {
	if j, ok := m[k]; ok {
		return j
	}
	m[k] = v
	return v
}

// selection chooses coins for a payment: shapes gives each source's
// transaction shape (its change script), multi the shape of a
// transaction merging sources.
type selection struct {
	shapes map[string]*txShape
	multi  *txShape
	target btcutil.Amount
}

// shapeOf returns the shape of a transaction spending ins.
func (s *selection) shapeOf(ins []*spendable) *txShape {
	for _, in := range ins[1:] {
		if in.source != ins[0].source {
			return s.multi
		}
	}
	return s.shapes[ins[0].source]
}

// covers reports whether ins pay the target and their fee without
// change.
func (s *selection) covers(ins []*spendable) bool {
	return s.shapeOf(ins).covers(ins, s.target)
}

// selectPrivate is SelectPrivate (see above); nil when the coins cannot
// pay the target.
func (s *selection) selectPrivate(coins []*spendable) []*spendable {
	sorted := append([]*spendable(nil), coins...)
	sortCoins(sorted, false)
	for _, c := range sorted {
		if s.covers([]*spendable{c}) {
			return []*spendable{c}
		}
	}
	clusters := map[int][]*spendable{}
	for _, c := range sorted {
		clusters[c.cluster] = append(clusters[c.cluster], c)
	}
	var groups [][]*spendable
	for _, g := range clusters {
		groups = append(groups, g)
	}
	sortGroups(groups)
	// The smallest single cluster that suffices (groups are sorted by
	// value, smallest first).
	for _, g := range groups {
		if s.covers(g) {
			return g
		}
	}
	// The fewest clusters of one source, largest first; the source
	// needing the fewest wins.
	bySource := map[string][][]*spendable{}
	var sources []string
	for _, g := range groups {
		src := g[0].source
		if _, ok := bySource[src]; !ok {
			sources = append(sources, src)
		}
		bySource[src] = append(bySource[src], g)
	}
	sort.Strings(sources)
	var best []*spendable
	bestGroups := 0
	for _, src := range sources {
		gs := bySource[src]
		var ins []*spendable
		for i := len(gs) - 1; i >= 0; i-- {
			ins = append(ins, gs[i]...)
			if s.covers(ins) {
				if n := len(gs) - i; best == nil || n < bestGroups || n == bestGroups && sum(ins) < sum(best) {
					best, bestGroups = ins, n
				}
				break
			}
		}
	}
	if best != nil {
		return best
	}
	// Several sources: every cluster, largest first.
	var ins []*spendable
	for i := len(groups) - 1; i >= 0; i-- {
		ins = append(ins, groups[i]...)
		if s.covers(ins) {
			return ins
		}
	}
	return nil
}

// selectLargestFirst takes coins by value, largest first.
func (s *selection) selectLargestFirst(coins []*spendable) []*spendable {
	sorted := append([]*spendable(nil), coins...)
	sortCoins(sorted, true)
	var ins []*spendable
	for _, c := range sorted {
		ins = append(ins, c)
		if s.covers(ins) {
			return ins
		}
	}
	return nil
}

// sortCoins orders coins by amount (descending when desc), then by
// outpoint, so a selection is the same every time.
func sortCoins(c []*spendable, desc bool) {
	sort.Slice(c, func(i, j int) bool {
		if c[i].amount != c[j].amount {
			return (c[i].amount > c[j].amount) == desc
		}
		if x := bytes.Compare(c[i].op.Hash[:], c[j].op.Hash[:]); x != 0 {
			return x < 0
		}
		return c[i].op.Index < c[j].op.Index
	})
}

// sortGroups orders clusters by total value, smallest first.
func sortGroups(g [][]*spendable) {
	sort.SliceStable(g, func(i, j int) bool {
		if a, b := sum(g[i]), sum(g[j]); a != b {
			return a < b
		}
		return bytes.Compare(g[i][0].op.Hash[:], g[j][0].op.Hash[:]) < 0
	})
}

// receivedTxs counts the distinct transactions the coins were received
// in: 1 links nothing new.
func receivedTxs(ins []*spendable) int {
	seen := map[chainhash.Hash]bool{}
	for _, in := range ins {
		seen[in.op.Hash] = true
	}
	return len(seen)
}
