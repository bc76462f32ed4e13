package wallet

import (
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/big"
	"strings"

	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/btcutil/psbt"
	"github.com/btcsuite/btcd/mempool"
	"github.com/btcsuite/btcd/txscript"
	"github.com/btcsuite/btcd/wire"
	"github.com/btcsuite/btcwallet/waddrmgr"
)

// Unsigned transactions for an external signer (BIP174 PSBT).
//
// The wallet holds no private key: CreatePSBT builds the unsigned
// transaction and everything a signer needs to check and sign it without
// trusting this wallet: for each input the output it spends (witness
// UTXO) and, except for taproot, the whole previous transaction
// (non-witness UTXO: a signer that checks the amounts it signs for needs
// it even for segwit v0 inputs, whose signatures commit to their own
// amount only), its redeem and witness scripts, and the BIP32 derivation
// of each of its keys (taproot: the internal key and its derivation,
// BIP371); the change output carries the same, so a hardware signer
// shows it as the wallet's own. The fee rate is the caller's: a light
// client has no fee estimate of its own (Bitcoin Core's comes from the
// transactions of its mempool and the blocks that confirm them, which
// BIP37 never sends).

// Fee-rate bounds of CreatePSBT, in satoshis per virtual byte.
const (
	// MinFeeRate is Bitcoin Core's default minimum relay fee rate since
	// 29.1 (100 sat/kvB). btcd and older Core relay from 1 sat/vB (their
	// default -minrelaytxfee of 1,000 sat/kvB): below that only peers
	// set lower relay it.
	MinFeeRate = 0.1
	// MaxFeeRate refuses a fee rate no one means: 1,000 sat/vB pays
	// 141,000 sat for a one-input payment, hundreds of times the rate of
	// a full mempool.
	MaxFeeRate = 1000
)

// Errors of CreatePSBT. Each is returned inside an *InputError (so
// IsInputError holds) and nothing is written.
var (
	// ErrFeeRate is returned for a fee rate outside [MinFeeRate,
	// MaxFeeRate].
	ErrFeeRate = errors.New("wallet: fee rate out of range")
	// ErrInsufficientFunds is returned when the spendable coins cannot
	// pay the outputs and the fee.
	ErrInsufficientFunds = errors.New("wallet: insufficient funds")
	// ErrNoOutputs is returned for a request with no output and no
	// sweep, or both.
	ErrNoOutputs = errors.New("wallet: no outputs")
	// ErrDustOutput is returned for an output no peer relays (below its
	// dust threshold).
	ErrDustOutput = errors.New("wallet: output amount below the dust threshold")
	// ErrNoChange is returned when the coins chosen have no change
	// branch (imported addresses, a receive-only descriptor) and the
	// payment needs change.
	ErrNoChange = errors.New("wallet: no change address")
)

// PSBTOutput is one payment of a PSBTRequest.
type PSBTOutput struct {
	Address string
	Amount  btcutil.Amount
}

// PSBTRequest describes the transaction CreatePSBT builds.
type PSBTRequest struct {
	// Outputs are the payments; or SweepTo, an address that receives
	// every coin the selection may take (From's, or the whole wallet's)
	// minus the fee.
	Outputs []PSBTOutput
	SweepTo string
	// FeeRate is in satoshis per virtual byte (fractions allowed),
	// within [MinFeeRate, MaxFeeRate]. Required.
	FeeRate float64
	// From limits the coins to one account or descriptor, named as
	// ReceiveOptions.From names them (or "imported" for the single
	// addresses); empty: any.
	From string
	// IncludeUnconfirmed also takes unconfirmed incoming coins (never
	// those of a conflicted transaction); IncludePendingSpent also
	// coins an unconfirmed wallet transaction spends (the new
	// transaction conflicts with it). Both are off by default: only
	// confirmed, unspent, mature coins.
	IncludeUnconfirmed  bool
	IncludePendingSpent bool
	// DryRun plans and prices the transaction without recording its
	// change address as handed out: the result shows the inputs,
	// outputs and fee, and carries no PSBT to sign (Packet nil, Base64
	// empty), so a preview never uses up a change address.
	DryRun bool
	// Selection is the coin selection policy (SelectPrivate by
	// default).
	Selection CoinSelection
}

// PSBTCoin is one input of a built PSBT.
type PSBTCoin struct {
	Txid    string         `json:"txid"`
	Vout    uint32         `json:"vout"`
	Amount  btcutil.Amount `json:"amount_sat"`
	Address string         `json:"address,omitempty"`
	From    string         `json:"from"`
}

// PSBTPayment is one output of a built PSBT.
type PSBTPayment struct {
	Address string         `json:"address"`
	Amount  btcutil.Amount `json:"amount_sat"`
	Change  bool           `json:"change,omitempty"`
	// Index is a change output's index on its change branch.
	Index uint32 `json:"index,omitempty"`
}

// PSBT is what CreatePSBT built.
type PSBT struct {
	// Packet is the unsigned PSBT; Base64 its serialization.
	Packet *psbt.Packet `json:"-"`
	Base64 string       `json:"psbt"`
	// Inputs and Outputs are in the transaction's order.
	Inputs  []PSBTCoin    `json:"inputs"`
	Outputs []PSBTPayment `json:"outputs"`
	// Fee is in satoshis; VSize the estimated virtual size once signed
	// (signatures at their longest), FeeRate the fee over it.
	Fee     btcutil.Amount `json:"fee_sat"`
	VSize   int64          `json:"vsize"`
	FeeRate float64        `json:"fee_rate_sat_vb"`
	// ReceivedTxs counts the distinct transactions the inputs were
	// received in: what the transaction links on chain (1: nothing
	// new).
	ReceivedTxs int    `json:"received_txs"`
	Selection   string `json:"selection"`
	// ChangeGap is where the change address stands against its
	// branch's gap limit (nil without change).
	ChangeGap *ChangeGap `json:"change_gap,omitempty"`
	// DryRun is set for a PSBTRequest.DryRun result.
	DryRun bool `json:"dry_run,omitempty"`
}

// ChangeGap is a change address against its branch's gap limit, as
// ReceiveInfo counts a receive address: Unpaid counts the change
// addresses handed out and unpaid after the last paid one, this one
// included; past GapLimit (BeyondGap) a wallet restored from the key with
// that gap limit would not find this change until the ones before it are
// paid. The change of PSBTs never broadcast uses the gap up.
type ChangeGap struct {
	Unpaid    uint32 `json:"unpaid"`
	GapLimit  uint32 `json:"gap_limit"`
	BeyondGap bool   `json:"beyond_gap,omitempty"`
}

// CreatePSBT builds an unsigned transaction from the wallet's coins (see
// psbt.go and coinselect.go) and, when it pays change, records the change
// address as handed out (the next change address, as Receive does on the
// receive branch) and commits, so two PSBTs never share a change address.
// A PSBT that is never broadcast leaves its change address unused: the
// wallet keeps watching it, but a wallet restored from the key scans the
// change branch only to the change gap limit past the last used address.
// Any refusal (fee rate, outputs, funds) is an *InputError and writes
// nothing.
func (w *Wallet) CreatePSBT(req PSBTRequest) (*PSBT, error) {
	unlock, err := w.enter()
	if err != nil {
		return nil, err
	}
	defer unlock()
	if math.IsNaN(req.FeeRate) || req.FeeRate < MinFeeRate || req.FeeRate > MaxFeeRate {
		return nil, inputErr("fee rate", fmt.Sprintf("%v sat/vB", req.FeeRate), fmt.Errorf("%w: give one in [%v, %v] sat/vB (bloomwatch has no fee estimate: a light client sees no mempool)", ErrFeeRate, MinFeeRate, MaxFeeRate))
	}
	if _, exact := satPerKvB(req.FeeRate); !exact {
		return nil, inputErr("fee rate", fmt.Sprintf("%v sat/vB", req.FeeRate), fmt.Errorf("%w: at most 3 decimals (a whole number of sat/kvB, as Bitcoin Core takes it)", ErrFeeRate))
	}
	outs, sweep, err := w.psbtOutputs(req)
	if err != nil {
		return nil, err
	}
	var b *psbtBuild
	err = w.view(func(rb readBuckets) error {
		var err error
		b, err = w.planPSBT(rb, req, outs, sweep)
		return err
	})
	if err != nil {
		return nil, err
	}
	if b.change != nil && !req.DryRun {
		err = w.updateNow(func(bk buckets) error { return w.handOutChange(bk, b.change) })
		if err != nil {
			return nil, err
		}
	}
	res, err := b.result()
	if err != nil {
		return nil, err
	}
	if b.change != nil {
		g := &ChangeGap{Unpaid: b.change.unpaid, GapLimit: w.gapFor(waddrmgr.InternalBranch)}
		g.BeyondGap = g.Unpaid > g.GapLimit
		res.ChangeGap = g
	}
	if req.DryRun {
		res.Packet, res.Base64, res.DryRun = nil, "", true
	}
	return res, nil
}

// psbtOutputs checks the request's outputs: addresses of the wallet's
// network, amounts above dust. sweep is the sweep output (amount 0).
func (w *Wallet) psbtOutputs(req PSBTRequest) (outs []*wire.TxOut, sweep *wire.TxOut, err error) {
	if (len(req.Outputs) == 0) == (req.SweepTo == "") {
		return nil, nil, inputErr("outputs", "", fmt.Errorf("%w: give payments or a sweep address, not both", ErrNoOutputs))
	}
	for _, o := range req.Outputs {
		ws, err := parseAddress(o.Address, w.net.params)
		if err != nil {
			return nil, nil, err
		}
		out := wire.NewTxOut(int64(o.Amount), ws.pkScript)
		if o.Amount <= 0 || o.Amount > btcutil.MaxSatoshi || mempool.IsDust(out, mempool.DefaultMinRelayTxFee) {
			return nil, nil, inputErr("amount", o.Amount.String(), fmt.Errorf("%w of %d sat for %s", ErrDustOutput, mempool.GetDustThreshold(out), ws.kind))
		}
		outs = append(outs, out)
	}
	if req.SweepTo != "" {
		ws, err := parseAddress(req.SweepTo, w.net.params)
		if err != nil {
			return nil, nil, err
		}
		sweep = wire.NewTxOut(0, ws.pkScript)
	}
	return outs, sweep, nil
}

// psbtBuild is a planned PSBT.
type psbtBuild struct {
	w        *Wallet
	ins      []*spendable
	outs     []*wire.TxOut
	signing  map[wire.OutPoint]*scriptSigning
	prevTxs  map[wire.OutPoint]*wire.MsgTx
	change   *changePlan
	fee      btcutil.Amount
	lockTime uint32
	policy   CoinSelection
	shape    *txShape
}

// changePlan is the change output and where it is derived.
type changePlan struct {
	src   receiveSource
	index uint32
	// unpaid counts the branch's handed-out, unpaid addresses after the
	// last paid one, this one included (ReceiveInfo.Unpaid).
	unpaid  uint32
	out     *wire.TxOut
	signing *scriptSigning
	address string
}

// planPSBT selects the coins and lays out the transaction.
func (w *Wallet) planPSBT(b readBuckets, req PSBTRequest, outs []*wire.TxOut, sweep *wire.TxOut) (*psbtBuild, error) {
	owners, err := readDescriptorOwners(b)
	if err != nil {
		return nil, err
	}
	ps, err := w.readPending(b.tm)
	if err != nil {
		return nil, err
	}
	coins, err := w.readCoins(b.tm, ps)
	if err != nil {
		return nil, err
	}
	build := &psbtBuild{w: w, signing: map[wire.OutPoint]*scriptSigning{}, prevTxs: map[wire.OutPoint]*wire.MsgTx{}, policy: req.Selection}
	if w.synced.Height > 0 {
		build.lockTime = uint32(w.synced.Height) // anti fee sniping, as Core
	}
	cands, total, err := w.psbtCandidates(b, owners, coins, req, build)
	if err != nil {
		return nil, err
	}
	var target btcutil.Amount
	for _, o := range outs {
		target += btcutil.Amount(o.Value)
	}
	changes := map[string]*changePlan{}
	sel := &selection{shapes: map[string]*txShape{}, target: target}
	for _, c := range cands {
		if _, ok := sel.shapes[c.source]; ok {
			continue
		}
		shape := &txShape{outputs: outs, rate: req.FeeRate}
		if sweep == nil {
			cp, err := w.planChange(b, owners, c.source)
			if err != nil {
				return nil, err
			}
			if cp != nil {
				changes[c.source], shape.change = cp, cp.out.PkScript
			}
		}
		sel.shapes[c.source] = shape
	}
	// A transaction merging sources pays change to the richest one's.
	richest, best := "", btcutil.Amount(-1)
	bySource := map[string]btcutil.Amount{}
	for _, c := range cands {
		bySource[c.source] += c.amount
	}
	for src, v := range bySource {
		if v > best || v == best && src < richest {
			richest, best = src, v
		}
	}
	sel.multi = sel.shapes[richest]

	var ins []*spendable
	switch {
	case sweep != nil:
		ins = cands
		if len(ins) == 0 {
			return nil, inputErr("amount", "", fmt.Errorf("%w: nothing to sweep: the wallet holds %s spendable", ErrInsufficientFunds, total))
		}
		shape := &txShape{outputs: []*wire.TxOut{sweep}, rate: req.FeeRate}
		build.fee = shape.feeFor(ins, false)
		sweep.Value = int64(sum(ins) - build.fee)
		if sweep.Value <= 0 || mempool.IsDust(sweep, mempool.DefaultMinRelayTxFee) {
			return nil, inputErr("amount", "", fmt.Errorf("%w: sweeping %s pays a fee of %s and leaves %d sat, below the dust threshold", ErrInsufficientFunds, sum(ins), build.fee, sweep.Value))
		}
		build.outs, build.shape = []*wire.TxOut{sweep}, shape
		build.ins = ins
		return build, nil
	case req.Selection == SelectLargestFirst:
		ins = sel.selectLargestFirst(cands)
	default:
		ins = sel.selectPrivate(cands)
	}
	if ins == nil {
		need := target
		if len(cands) > 0 {
			need += sel.multi.feeFor(cands, false)
		}
		return nil, inputErr("amount", target.String(), fmt.Errorf("%w: the outputs and fee need %s, the wallet holds %s spendable (confirmed, unspent, not pending%s)",
			ErrInsufficientFunds, need, total, fromNote(req.From)))
	}
	shape := sel.shapeOf(ins)
	build.ins, build.shape, build.outs = ins, shape, outs
	feeNoChange := shape.feeFor(ins, false)
	if shape.change != nil {
		feeChange := shape.feeFor(ins, true)
		change := wire.NewTxOut(int64(sum(ins)-target-feeChange), shape.change)
		if change.Value > 0 && !mempool.IsDust(change, mempool.DefaultMinRelayTxFee) {
			src := ins[0].source
			if shape == sel.multi {
				src = richest
			}
			build.change = changes[src]
			build.change.out.Value = change.Value
			build.fee = feeChange
			return build, nil
		}
	} else if sum(ins)-target-feeNoChange > btcutil.Amount(mempool.GetDustThreshold(wire.NewTxOut(0, make([]byte, 22)))) {
		return nil, inputErr("from", ins[0].source, fmt.Errorf("%w: the coins chosen (%s) have no change branch and %s would be left over; pay their whole value or sweep them",
			ErrNoChange, ins[0].source, sum(ins)-target-feeNoChange))
	}
	build.fee = sum(ins) - target // the leftover below dust goes to the fee
	return build, nil
}

// fromNote names From in a refusal.
func fromNote(from string) string {
	if from == "" {
		return ""
	}
	return ", of " + from
}

// psbtCandidates returns the coins the request may spend, with their
// weight, source and cluster, and the total they hold.
func (w *Wallet) psbtCandidates(b readBuckets, owners *descriptorOwners, coins []coin, req PSBTRequest, build *psbtBuild) ([]*spendable, btcutil.Amount, error) {
	tip := w.synced.Height
	maturity := int32(w.net.params.CoinbaseMaturity)
	var out []*spendable
	var total btcutil.Amount
	from := strings.TrimPrefix(strings.TrimSpace(req.From), "#")
	matched := from == ""
	for _, c := range coins {
		e := w.watch.lookup(c.pkScript)
		if e == nil {
			continue
		}
		src, desc := w.sourceOf(e.ref, owners, c.pkScript)
		if from != "" && src != from && desc != from {
			continue
		}
		matched = true
		switch {
		case c.conflicted:
			continue
		case c.height < 0 && !req.IncludeUnconfirmed:
			continue
		case len(c.spentBy) > 0 && !req.IncludePendingSpent:
			continue
		case c.coinbase && confirmations(c.height, tip) < maturity:
			continue
		}
		sign, err := w.signingOf(b, owners, c.pkScript)
		if err != nil {
			return nil, 0, err
		}
		weight, witness, ok := inputWeight(c.pkScript, sign)
		if !ok {
			continue // an imported script-hash address: its script is unknown
		}
		prev, err := w.txStore.TxDetails(b.tm, &c.op.Hash)
		if err != nil || prev == nil {
			return nil, 0, fmt.Errorf("%w: transaction %v of a wallet coin: %v", ErrCorrupt, c.op.Hash, errOrMissing(err))
		}
		tx := prev.MsgTx
		build.signing[c.op], build.prevTxs[c.op] = sign, &tx
		out = append(out, &spendable{coin: c, weight: weight, witness: witness, source: src})
		total += c.amount
	}
	if !matched {
		return nil, 0, inputErr("from", req.From, fmt.Errorf("%w: no coin of the wallet belongs to it", ErrInsufficientFunds))
	}
	clusterCoins(out)
	return out, total, nil
}

// sourceOf names the account or descriptor of a watched script, as
// Receive's From does, and the checksum of its descriptor.
func (w *Wallet) sourceOf(ref addrRef, owners *descriptorOwners, pkScript []byte) (src, desc string) {
	switch {
	case ref.imported:
		return "imported", owners.scripts[string(pkScript)]
	case ref.msig:
		sum := owners.branches[branchKey{ref.scope, ref.account, ref.branch}]
		return sum, sum
	}
	return fmt.Sprintf("%s/%d", scopeString(ref.scope), ref.account), owners.branches[branchKey{ref.scope, ref.account, ref.branch}]
}

// planChange returns the next change address of a source (nil for a
// source without a change branch): the index after the last paid or
// handed-out one of its change branch, derived when needed.
func (w *Wallet) planChange(b readBuckets, owners *descriptorOwners, source string) (*changePlan, error) {
	sources, err := w.changeSources(owners)
	if err != nil {
		return nil, err
	}
	src, ok := sources[source]
	if !ok {
		return nil, nil
	}
	handed, err := handedOut(b.own, src.key, src.msig)
	if err != nil {
		return nil, err
	}
	var paid uint32
	entries := w.branchEntries(src.key, src.msig)
	for i, e := range entries {
		if e.used {
			paid = max(paid, i+1)
		}
	}
	cp := &changePlan{src: src, index: max(paid, handed)}
	cp.unpaid = cp.index - paid + 1
	ws, err := w.scriptAtBranch(b, src, cp.index)
	if err != nil {
		return nil, err
	}
	cp.out, cp.address = wire.NewTxOut(0, ws.pkScript), ws.addressOn(w.net.params)
	return cp, nil
}

// changeSources maps each source name to its change branch.
func (w *Wallet) changeSources(owners *descriptorOwners) (map[string]receiveSource, error) {
	out := map[string]receiveSource{}
	for key, n := range w.watch.derived {
		if key.branch == waddrmgr.InternalBranch && n > 0 {
			out[fmt.Sprintf("%s/%d", scopeString(key.scope), key.account)] = receiveSource{key: key, desc: owners.branches[key]}
		}
	}
	for key := range w.watch.msig {
		if key.branch == waddrmgr.InternalBranch {
			// Named by the checksum of the descriptor of its receive
			// branch, as its coins' source is.
			recv := owners.branches[branchKey{key.scope, key.account, waddrmgr.ExternalBranch}]
			if recv == "" {
				recv = owners.branches[key]
			}
			out[recv] = receiveSource{key: key, msig: true, desc: recv}
		}
	}
	return out, nil
}

// scriptAtBranch returns the address at index of a branch, watched or
// not yet derived.
func (w *Wallet) scriptAtBranch(b readBuckets, src receiveSource, index uint32) (*watchedScript, error) {
	if e := w.branchEntries(src.key, src.msig)[index]; e != nil {
		return e.ws, nil
	}
	if src.msig {
		d, err := w.msigDescriptor(b.own, src.key.account)
		if err != nil {
			return nil, err
		}
		return d.scriptAt(w.watch.msig[src.key].path, index, w.net.params)
	}
	sm, err := w.addrMgr.FetchScopedKeyManager(src.key.scope)
	if err != nil {
		return nil, fmt.Errorf("scope %v: %w", src.key.scope, err)
	}
	bk, err := w.branchExtKey(b.am, sm, src.key)
	if err != nil {
		return nil, err
	}
	child, err := bk.key.Derive(index)
	if err != nil {
		return nil, fmt.Errorf("derive change %d: %w", index, err)
	}
	pub, err := child.ECPubKey()
	if err != nil {
		return nil, err
	}
	return scriptForKey(bk.kind, pub, w.net.params)
}

// handOutChange records the change address as handed out, derives
// through it and ahead of it, and takes its signing metadata.
func (w *Wallet) handOutChange(b buckets, cp *changePlan) error {
	var err error
	if cp.src.msig {
		_, err = w.msigDeriveThrough(b.own, cp.src.key, cp.index, false)
	} else {
		_, err = w.deriveThrough(b.am, cp.src.key, cp.index, false)
	}
	if err != nil {
		return err
	}
	ref := addrRef{msig: cp.src.msig, scope: cp.src.key.scope, account: cp.src.key.account, branch: cp.src.key.branch, index: cp.index}
	if _, err := w.ensureGapOf(b, ref, w.synced.Height); err != nil {
		return err
	}
	bkt, err := b.own.CreateBucketIfNotExists(bktHandedOut)
	if err != nil {
		return fmt.Errorf("handed-out bucket: %w", err)
	}
	if err := bkt.Put(handedKey(cp.src.key, cp.src.msig), binary.BigEndian.AppendUint32(nil, cp.index+1)); err != nil {
		return fmt.Errorf("record change: %w", err)
	}
	owners, err := readDescriptorOwners(readBuckets{b.am, b.tm, b.own})
	if err != nil {
		return err
	}
	cp.signing, err = w.signingOf(readBuckets{b.am, b.tm, b.own}, owners, cp.out.PkScript)
	return err
}

// result assembles the PSBT: inputs and the change output in random
// positions (an input or change order that follows a rule tells which
// wallet built it), nSequence 0xfffffffd (replaceable, as Core), the
// lock time at the wallet's tip (anti fee sniping).
func (b *psbtBuild) result() (*PSBT, error) {
	ins := append([]*spendable(nil), b.ins...)
	shuffle(len(ins), func(i, j int) { ins[i], ins[j] = ins[j], ins[i] })
	outs := append([]*wire.TxOut(nil), b.outs...)
	changeAt := -1
	if b.change != nil {
		changeAt = randIntn(len(outs) + 1)
		outs = append(outs[:changeAt], append([]*wire.TxOut{b.change.out}, outs[changeAt:]...)...)
	}
	tx := wire.NewMsgTx(2)
	tx.LockTime = b.lockTime
	for _, in := range ins {
		op := in.op
		tx.AddTxIn(&wire.TxIn{PreviousOutPoint: op, Sequence: wire.MaxTxInSequenceNum - 2})
	}
	for _, o := range outs {
		tx.AddTxOut(wire.NewTxOut(o.Value, o.PkScript))
	}
	p, err := psbt.NewFromUnsignedTx(tx)
	if err != nil {
		return nil, fmt.Errorf("psbt: %w", err)
	}
	res := &PSBT{Packet: p, Fee: b.fee, ReceivedTxs: receivedTxs(ins), Selection: b.policy.String()}
	for i, in := range ins {
		s := b.signing[in.op]
		pin := &p.Inputs[i]
		utxo := wire.NewTxOut(int64(in.amount), in.pkScript)
		class := txscript.GetScriptClass(in.pkScript)
		segwit := class == txscript.WitnessV0PubKeyHashTy || class == txscript.WitnessV0ScriptHashTy || class == txscript.WitnessV1TaprootTy ||
			class == txscript.ScriptHashTy && s != nil && txscript.IsWitnessProgram(s.redeem)
		if segwit {
			pin.WitnessUtxo = utxo
		}
		if class != txscript.WitnessV1TaprootTy {
			pin.NonWitnessUtxo = b.prevTxs[in.op]
		}
		if s != nil {
			s.fill(&pin.RedeemScript, &pin.WitnessScript, &pin.Bip32Derivation, &pin.TaprootInternalKey, &pin.TaprootBip32Derivation)
		}
		addr := ""
		if e := b.w.watch.lookup(in.pkScript); e != nil {
			addr = e.ws.addressOn(b.w.net.params)
		}
		res.Inputs = append(res.Inputs, PSBTCoin{Txid: in.op.Hash.String(), Vout: in.op.Index, Amount: in.amount, Address: addr, From: in.source})
	}
	for i, o := range tx.TxOut {
		pay := PSBTPayment{Amount: btcutil.Amount(o.Value)}
		if _, addrs, _, err := txscript.ExtractPkScriptAddrs(o.PkScript, b.w.net.params); err == nil && len(addrs) == 1 {
			pay.Address = addrs[0].EncodeAddress()
		}
		if i == changeAt {
			pay.Change, pay.Index = true, b.change.index
			if s := b.change.signing; s != nil {
				po := &p.Outputs[i]
				s.fill(&po.RedeemScript, &po.WitnessScript, &po.Bip32Derivation, &po.TaprootInternalKey, &po.TaprootBip32Derivation)
			}
		}
		res.Outputs = append(res.Outputs, pay)
	}
	if err := p.SanityCheck(); err != nil {
		return nil, fmt.Errorf("psbt: %w", err)
	}
	fee, err := p.GetTxFee()
	if err != nil || fee != b.fee {
		return nil, fmt.Errorf("psbt: fee %v (%v), planned %v", fee, err, b.fee)
	}
	res.VSize = vsizeOf(ins, tx.TxOut)
	res.FeeRate = float64(res.Fee) / float64(res.VSize)
	res.Base64, err = p.B64Encode()
	if err != nil {
		return nil, fmt.Errorf("psbt: %w", err)
	}
	return res, nil
}

// fill copies the metadata into a PSBT input's or output's fields.
func (s *scriptSigning) fill(redeem, witness *[]byte, derivs *[]*psbt.Bip32Derivation, internal *[]byte, tap *[]*psbt.TaprootBip32Derivation) {
	*redeem, *witness, *internal = s.redeem, s.witness, s.internalKey
	*derivs, *tap = s.derivs, s.tapDerivs
}

// randIntn returns a uniform integer in [0, n) from crypto/rand.
func randIntn(n int) int {
	if n <= 1 {
		return 0
	}
	v, err := rand.Int(rand.Reader, big.NewInt(int64(n)))
	if err != nil {
		return 0
	}
	return int(v.Int64())
}

// shuffle permutes n elements with crypto/rand (Fisher-Yates).
func shuffle(n int, swap func(i, j int)) {
	for i := n - 1; i > 0; i-- {
		swap(i, randIntn(i+1))
	}
}
