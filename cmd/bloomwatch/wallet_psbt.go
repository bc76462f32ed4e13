package main

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/btcsuite/btcd/btcutil"
	"github.com/spf13/cobra"

	"github.com/bloomwatch/bloomwatch/internal/amount"
	"github.com/bloomwatch/bloomwatch/internal/atomicfile"
	"github.com/bloomwatch/bloomwatch/wallet"
)

// walletPSBTOptions are the flags of `wallet psbt`.
type walletPSBTOptions struct {
	datadir      string
	to           []string
	sweep        string
	feeRate      float64
	from         string
	unconfirmed  bool
	pendingSpent bool
	selection    string
	out          string
	dryRun       bool
	asJSON       bool
}

// newWalletPSBTCmd returns `wallet psbt`.
func newWalletPSBTCmd() *cobra.Command {
	o := &walletPSBTOptions{}
	cmd := &cobra.Command{
		Use:   "psbt --datadir D (--to ADDR:AMOUNT... | --sweep ADDR) --feerate SAT_PER_VB [--out FILE | --dry-run]",
		Short: "Build an unsigned transaction (BIP174 PSBT) from the wallet's coins for an external signer",
		Long: "Build an unsigned transaction paying --to ADDR:AMOUNT (repeatable; AMOUNT in BTC, or\n" +
			"with the suffix sat) or sweeping the coins to --sweep ADDR, from the wallet's confirmed,\n" +
			"unspent coins, with change to the next change address (recorded as handed out). Each\n" +
			"input carries what a hardware signer needs to check and sign it: the output it spends,\n" +
			"the previous transaction (except taproot), its scripts and the BIP32 derivation of its\n" +
			"keys (master fingerprint and path from the descriptor's key origin). --feerate is\n" +
			"required: a light client sees no mempool and has no fee estimate of its own. The coin\n" +
			"selection avoids merging coins of different received transactions (--coin-selection\n" +
			"largest-first for the classic). Prints the PSBT in base64 last; --out writes it as a\n" +
			"binary .psbt file instead. Sign it elsewhere, then `bloomwatch broadcast`. --dry-run\n" +
			"prints the transaction and its fee without a PSBT and without reserving the change\n" +
			"address. A warning on stderr says when the change address reaches or passes the change\n" +
			"branch's gap limit (unbroadcast PSBTs use the gap up, as unpaid receive addresses do).",
		Args: cobra.NoArgs,
		RunE: o.run,
	}
	f := cmd.Flags()
	registerDatadir(f, &o.datadir)
	f.StringArrayVar(&o.to, "to", nil, "payment ADDR:AMOUNT, AMOUNT in BTC (0.001) or satoshis (100000sat) (repeatable)")
	f.StringVar(&o.sweep, "sweep", "", "send every spendable coin (of --from) to this address, minus the fee")
	f.Float64Var(&o.feeRate, "feerate", 0, "fee rate in sat/vB (required; bloomwatch has no fee estimate)")
	f.StringVar(&o.from, "from", "", "spend only coins of this account (m/84'/1'/0), descriptor (checksum) or imported")
	f.BoolVar(&o.unconfirmed, "include-unconfirmed", false, "also spend unconfirmed incoming coins")
	f.BoolVar(&o.pendingSpent, "include-pending-spent", false, "also spend coins a pending transaction spends (replacing it)")
	f.StringVar(&o.selection, "coin-selection", "private", "private (avoid merging received transactions) or largest-first")
	f.StringVar(&o.out, "out", "", "write the PSBT to this file (binary BIP174) instead of printing it")
	f.BoolVar(&o.dryRun, "dry-run", false, "print the transaction and fee only: no PSBT, no change address reserved")
	f.BoolVar(&o.asJSON, "json", false, "print JSON")
	return cmd
}

// parseBTCAmount parses an amount in BTC ("0.001", at most 8 decimals) or
// in satoshis ("100000sat").
func parseBTCAmount(s string) (btcutil.Amount, error) {
	s = strings.TrimSpace(s)
	if n, ok := strings.CutSuffix(s, "sat"); ok {
		v, err := strconv.ParseInt(strings.TrimSpace(n), 10, 64)
		if err != nil || v <= 0 {
			return 0, fmt.Errorf("amount %q: a positive whole number of satoshis", s)
		}
		return btcutil.Amount(v), nil
	}
	whole, frac, _ := strings.Cut(s, ".")
	if whole == "" && frac == "" || len(frac) > 8 || strings.Trim(whole+frac, "0123456789") != "" {
		return 0, fmt.Errorf("amount %q: BTC with at most 8 decimals (0.001) or satoshis (100000sat)", s)
	}
	frac += strings.Repeat("0", 8-len(frac))
	w, err := strconv.ParseInt("0"+whole, 10, 64)
	if err != nil || w > btcutil.MaxSatoshi/btcutil.SatoshiPerBitcoin {
		return 0, fmt.Errorf("amount %q: above 21 million BTC", s)
	}
	f, _ := strconv.ParseInt(frac, 10, 64)
	v := w*btcutil.SatoshiPerBitcoin + f
	if v <= 0 {
		return 0, fmt.Errorf("amount %q: not positive", s)
	}
	return btcutil.Amount(v), nil
}

// request checks the flags and builds the wallet's request.
func (o *walletPSBTOptions) request(prefix string) (wallet.PSBTRequest, error) {
	req := wallet.PSBTRequest{SweepTo: o.sweep, FeeRate: o.feeRate, From: o.from,
		IncludeUnconfirmed: o.unconfirmed, IncludePendingSpent: o.pendingSpent, DryRun: o.dryRun}
	if o.datadir == "" {
		return req, usagef("%s: --datadir is required", prefix)
	}
	if o.feeRate == 0 {
		return req, usagef("%s: --feerate is required (sat/vB): bloomwatch has no fee estimate, a light client sees no mempool", prefix)
	}
	if math.IsNaN(o.feeRate) || math.IsInf(o.feeRate, 0) {
		return req, usagef("%s: --feerate %v is not a number of sat/vB", prefix, o.feeRate)
	}
	switch o.selection {
	case "private":
	case "largest-first":
		req.Selection = wallet.SelectLargestFirst
	default:
		return req, usagef("%s: --coin-selection %q: private or largest-first", prefix, o.selection)
	}
	if len(o.to) == 0 && o.sweep == "" {
		return req, usagef("%s: give --to ADDR:AMOUNT or --sweep ADDR", prefix)
	}
	for _, t := range o.to {
		addr, amt, ok := strings.Cut(t, ":")
		if !ok || addr == "" {
			return req, usagef("%s: --to %q: ADDR:AMOUNT", prefix, t)
		}
		v, err := parseBTCAmount(amt)
		if err != nil {
			return req, usagef("%s: --to: %w", prefix, err)
		}
		req.Outputs = append(req.Outputs, wallet.PSBTOutput{Address: addr, Amount: v})
	}
	if o.dryRun && o.out != "" {
		return req, usagef("%s: --dry-run writes no PSBT: drop --out", prefix)
	}
	if o.out != "" {
		if st, err := os.Stat(filepath.Dir(o.out)); err != nil || !st.IsDir() {
			return req, usagef("%s: --out %s: no such directory", prefix, filepath.Dir(o.out))
		}
	}
	return req, nil
}

// run implements `wallet psbt`.
func (o *walletPSBTOptions) run(cmd *cobra.Command, _ []string) (err error) {
	const prefix = "wallet psbt"
	req, err := o.request(prefix)
	if err != nil {
		return err
	}
	w, done, err := openSource(cmd.Context(), prefix, o.datadir)
	if err != nil {
		return err
	}
	defer done(&err)
	res, err := w.CreatePSBT(cmd.Context(), req)
	if err != nil {
		return walletErr(prefix, err)
	}
	if o.out != "" {
		var buf bytes.Buffer
		if err := res.Packet.Serialize(&buf); err != nil {
			return fmt.Errorf("%s: %w", prefix, err)
		}
		if err := atomicfile.Write(o.out, buf.Bytes(), 0o600); err != nil {
			return fmt.Errorf("%s: --out: %w", prefix, err)
		}
	}
	if o.feeRate < 1 {
		fmt.Fprintf(cmd.ErrOrStderr(), "%s: warning: %v sat/vB is below btcd's and Bitcoin Core's (before 29.1) default relay minimum of 1 sat/vB: only peers that relay from %v sat/vB pass it on\n", prefix, o.feeRate, o.feeRate)
	}
	if w := changeGapWarning(res); w != "" {
		fmt.Fprintln(cmd.ErrOrStderr(), prefix+": warning: "+w)
	}
	if o.asJSON {
		return writeJSON(cmd, res)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "inputs %d, received in %d transaction(s) (%s selection)\n", len(res.Inputs), res.ReceivedTxs, res.Selection)
	for _, in := range res.Inputs {
		fmt.Fprintf(&b, "  %s:%d  %s BTC  %s  %s\n", in.Txid, in.Vout, amount.BTC(int64(in.Amount)), in.Address, in.From)
	}
	fmt.Fprintf(&b, "outputs %d\n", len(res.Outputs))
	for _, out := range res.Outputs {
		note := ""
		if out.Change {
			note = fmt.Sprintf("  change (index %d)", out.Index)
		}
		fmt.Fprintf(&b, "  %s  %s BTC%s\n", out.Address, amount.BTC(int64(out.Amount)), note)
	}
	fmt.Fprintf(&b, "fee %s BTC (%d vB at %.2f sat/vB once signed; the rate is yours: bloomwatch has no fee estimate)\n",
		amount.BTC(int64(res.Fee)), res.VSize, res.FeeRate)
	switch {
	case o.dryRun:
		b.WriteString("dry run: no PSBT written, the change address is not reserved (the next PSBT may use it)\n")
	case o.out != "":
		fmt.Fprintf(&b, "wrote %s: sign it, then bloomwatch broadcast --psbt %s\n", o.out, o.out)
	default:
		b.WriteString(res.Base64 + "\n")
	}
	_, err = fmt.Fprint(cmd.OutOrStdout(), b.String())
	return err
}

// changeGapWarning says when a PSBT's change address is the last within
// its branch's gap limit or past it, "" otherwise.
func changeGapWarning(res *wallet.PSBT) string {
	if res.ChangeGap == nil {
		return ""
	}
	n, gap := res.ChangeGap.Unpaid, res.ChangeGap.GapLimit
	switch {
	case gap == 0 || n < gap:
		return ""
	case n == gap:
		return fmt.Sprintf("this change address is the last of the change gap limit of %d: the %d change addresses handed out after the last paid one are unpaid (PSBTs not broadcast); the next one passes the gap", gap, n)
	}
	return fmt.Sprintf("this change address is past the change gap limit of %d (%d unpaid change addresses after the last paid one, PSBTs not broadcast): a wallet restored from the key with that gap limit will not find it until the ones before it are paid; use --dry-run for previews", gap, n)
}
