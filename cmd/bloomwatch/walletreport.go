package main

// This file is what `bloomwatch wallet balance`, `txs`, `utxos`,
// `addresses` and `stats` print: the values their --json writes, read
// through package wallet's queries, and the text tables and notes of the
// plain output. Package wallet holds the data; how it reads on a terminal
// is decided here, in the command line.

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/bloomwatch/bloomwatch/internal/amount"
	"github.com/bloomwatch/bloomwatch/internal/table"
	"github.com/bloomwatch/bloomwatch/nodeapi"
	"github.com/bloomwatch/bloomwatch/wallet"
)

// balanceReport is the balance with its worst-case total and the height the
// wallet is synced to (`wallet balance --json`).
type balanceReport struct {
	wallet.Balance
	Total int64 `json:"total_sat"`
	// SyncedHeight is the last block the balance reflects
	// (Wallet.HistoryPoint), -1 before the first block; SyncedHash is
	// then empty.
	SyncedHeight int32  `json:"synced_height"`
	SyncedHash   string `json:"synced_hash,omitempty"`
	// RescanPending is set when keys or addresses were added after the
	// last sync (Wallet.RescanPending): the balance is as of
	// SyncedHeight without their history, which the next sync finds.
	RescanPending bool `json:"rescan_pending,omitempty"`
	// Birthday is where that rescan starts.
	Birthday int32 `json:"birthday"`
}

// readBalanceReport returns w's balance and the block it reflects.
func readBalanceReport(ctx context.Context, w nodeapi.Wallet) (balanceReport, error) {
	info, err := w.Balance(ctx)
	if err != nil {
		return balanceReport{}, err
	}
	bal := info.Balance
	r := balanceReport{Balance: bal, Total: int64(bal.Total()), SyncedHeight: info.SyncedHeight,
		RescanPending: info.RescanPending, Birthday: info.Birthday}
	if info.SyncedHeight >= 0 {
		r.SyncedHash = info.SyncedHash
	}
	return r, nil
}

// rescanNote is the one line that says a rescan is pending (see
// wallet.Wallet.RescanPending) and what the wallet shows until it is done,
// or "" when none is.
func rescanNote(pending bool, birthday, height int32) string {
	if !pending {
		return ""
	}
	return fmt.Sprintf("rescan pending: keys or addresses were added after the last sync; the next sync looks for their "+
		"history from the birthday (height %d). Until then the wallet shows what it found up to height %d, without it.",
		birthday, height)
}

// stateRescanNote returns the rescanNote of a read's wallet state ("" when
// no rescan is pending).
func stateRescanNote(st nodeapi.State) string {
	return rescanNote(st.RescanPending, st.Birthday, st.SyncedHeight)
}

// balanceNote explains the balance rows under the table.
const balanceNote = "confirmed ignores unconfirmed spends (they are pending spent until a block confirms them);\n" +
	"total is the worst case: confirmed + immature + unconfirmed - pending spent, without the\n" +
	"outputs of conflicting unconfirmed transactions (conflicts: at most one of each set confirms)"

// writeTable writes the balance as a right-aligned table, in satoshis and
// BTC, with a note on what the rows mean and the sync height.
func (r balanceReport) writeTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	for _, row := range []struct {
		name string
		sat  int64
	}{{"confirmed", int64(r.Confirmed)}, {"unconfirmed", int64(r.Unconfirmed)},
		{"immature", int64(r.Immature)}, {"pending spent", int64(r.PendingSpent)}, {"total", r.Total}} {
		fmt.Fprintf(tw, "%s\t%d sat\t%s BTC\t\n", row.name, row.sat, amount.BTC(row.sat))
	}
	fmt.Fprintf(tw, "conflicts\t%d tx\t\t\n", r.Conflicts)
	if err := tw.Flush(); err != nil {
		return err
	}
	synced := "not synced yet"
	if r.SyncedHeight >= 0 {
		synced = fmt.Sprintf("synced to height %d", r.SyncedHeight)
	}
	if note := rescanNote(r.RescanPending, r.Birthday, r.SyncedHeight); note != "" {
		synced += "\n" + note
	}
	_, err := fmt.Fprintln(w, balanceNote+"\n"+synced)
	return err
}

// expiryLayout is the time layout writeTxTable writes an unconfirmed
// transaction's expiry in.
const expiryLayout = "2006-01-02 15:04 UTC"

// writeTxTable writes transactions as a table: height ("mempool" when
// unconfirmed), txid, the wallet's net amount in satoshis, confirmations,
// and for an unconfirmed transaction when it expires and its conflicts
// (conflictsNote).
func writeTxTable(w io.Writer, txs []wallet.TxSummary) error {
	tw := table.New(w)
	fmt.Fprintln(tw, "HEIGHT\tTXID\tDELTA (sat)\tCONFIRMATIONS\tEXPIRES\tCONFLICTS")
	for _, t := range txs {
		height, expires, conflicts := fmt.Sprint(t.Height), table.NotKnown, table.NotKnown
		if t.Height < 0 {
			height = "mempool"
			if t.Expires != nil {
				expires = t.Expires.UTC().Format(expiryLayout)
			}
			conflicts = conflictsNote(t)
		}
		fmt.Fprintf(tw, "%s\t%s\t%+d\t%d\t%s\t%s\n", height, t.Txid, t.Delta, t.Confirmations, expires, conflicts)
	}
	return tw.Flush()
}

// conflictsNote describes an unconfirmed transaction's conflicts: the
// transactions spending the same coins (txids joined by commas), "via a
// conflicted parent", or "-" for none.
func conflictsNote(t wallet.TxSummary) string {
	switch {
	case len(t.Conflicts) > 0:
		ids := make([]string, len(t.Conflicts))
		for i, c := range t.Conflicts {
			ids[i] = c.String()
		}
		return strings.Join(ids, ",")
	case t.Conflicted:
		return "via a conflicted parent"
	default:
		return table.NotKnown
	}
}

// writeUTXOTable writes unspent outputs as a table: outpoint, amount in
// satoshis, height, confirmations, address and what unconfirmed
// transactions do to it (pendingNote).
func writeUTXOTable(w io.Writer, utxos []wallet.UTXO) error {
	tw := table.New(w)
	fmt.Fprintln(tw, "OUTPOINT\tAMOUNT (sat)\tHEIGHT\tCONFIRMATIONS\tADDRESS\tPENDING")
	for _, u := range utxos {
		fmt.Fprintf(tw, "%s:%d\t%d\t%d\t%d\t%s\t%s\n", u.Txid, u.Index, int64(u.Amount), u.Height, u.Confirmations, u.Address, pendingNote(u))
	}
	return tw.Flush()
}

// pendingNote describes what unconfirmed transactions do to an output:
// "spent by TXID" for the first that spends it (with "(+N conflicting)"
// when more do), "spent", and "conflicted" for an output of a conflicted
// unconfirmed transaction, joined by "; "; "-" for none.
func pendingNote(u wallet.UTXO) string {
	var parts []string
	if u.Conflicted {
		parts = append(parts, "conflicted")
	}
	if len(u.SpentBy) > 0 {
		p := "spent by " + u.SpentBy[0].String()
		if n := len(u.SpentBy) - 1; n > 0 {
			p += fmt.Sprintf(" (+%d conflicting)", n)
		}
		parts = append(parts, p)
	} else if u.PendingSpend {
		parts = append(parts, "spent")
	}
	if len(parts) == 0 {
		return table.NotKnown
	}
	return strings.Join(parts, "; ")
}

// writeAddressTable writes watched addresses as a table: the address (or
// "script:" and the element of a script without one), kind, derivation
// path ("imported" for a single address), whether it is used, and the
// checksum of the descriptor it comes from.
func writeAddressTable(w io.Writer, addrs []wallet.AddressInfo) error {
	tw := table.New(w)
	fmt.Fprintln(tw, "ADDRESS\tKIND\tPATH\tUSED\tDESCRIPTOR")
	for _, a := range addrs {
		path := "imported"
		switch {
		case !a.Imported && a.Path != "":
			path = a.Path
		case !a.Imported:
			path = fmt.Sprintf("%d/%d", a.Branch, a.Index) // a multisig descriptor's
		}
		used := fmt.Sprint(a.Used)
		if a.HandedOut {
			used = "handed out"
		}
		shown := a.Address
		if shown == "" {
			shown = "script:" + a.Element
		}
		desc := table.NotKnown
		if a.Descriptor != "" {
			desc = "#" + a.Descriptor
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", shown, a.Kind, path, used, desc)
	}
	return tw.Flush()
}

// statsReport is the match statistics with the address counts, the descriptors
// and the newest false positives (`wallet stats --json`).
type statsReport struct {
	wallet.Stats
	Addresses wallet.AddressCounts `json:"addresses"`
	// Descriptors is never nil, so it prints as [] when empty.
	Descriptors      []wallet.DescriptorInfo `json:"descriptors"`
	FalsePositiveTxs []wallet.FalsePositive  `json:"false_positive_txs,omitempty"`
}

// readStatsReport returns w's statistics, with up to fps false-positive
// transactions, newest first (none when fps is 0).
func readStatsReport(ctx context.Context, w nodeapi.Wallet, fps int) (statsReport, error) {
	info, err := w.Stats(ctx, fps)
	if err != nil {
		return statsReport{}, err
	}
	r := statsReport{Stats: info.Stats, Addresses: info.Counts, Descriptors: info.Descriptors}
	if r.Descriptors == nil {
		r.Descriptors = []wallet.DescriptorInfo{}
	}
	if fps > 0 {
		r.FalsePositiveTxs = info.FalsePositives
	}
	return r, nil
}

// writeText writes the statistics, one figure per line.
func (r statsReport) writeText(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "blocks applied %d\n", r.BlocksApplied)
	fmt.Fprintf(&b, "block matches %d: relevant %d, false positives %d\n", r.Matched, r.Relevant, r.FalsePositives)
	fmt.Fprintf(&b, "mempool matches %d: relevant %d, false positives %d\n", r.MempoolMatched, r.MempoolRelevant, r.MempoolFalsePositives)
	fmt.Fprintf(&b, "filter elements %d data + %d outpoints, %d watched scripts\n", r.Elements, r.OutPoints, r.Scripts)
	fmt.Fprintf(&b, "addresses %d derived (%d used), %d imported (%d used)\n",
		r.Addresses.Derived, r.Addresses.DerivedUsed, r.Addresses.Imported, r.Addresses.ImportedUsed)
	for _, d := range r.Descriptors {
		fmt.Fprintf(&b, "descriptor %s checksum %s (%s)\n", d.Descriptor, d.Checksum, d.Kind)
	}
	for _, fp := range r.FalsePositiveTxs {
		fmt.Fprintf(&b, "false positive %s height %d\n", fp.Txid, fp.Height)
	}
	_, err := io.WriteString(w, b.String())
	return err
}
