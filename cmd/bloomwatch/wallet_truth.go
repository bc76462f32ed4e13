package main

import (
	"bytes"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/bloomwatch/bloomwatch/internal/atomicfile"
	"github.com/bloomwatch/bloomwatch/privacy/element"
	"github.com/bloomwatch/bloomwatch/wallet"
)

// walletTruthOptions are the flags of `wallet export-truth`.
type walletTruthOptions struct {
	datadir string
	out     string
}

// newWalletExportTruthCmd returns `wallet export-truth`, which writes the
// truth file `privacy analyze --truth` reads.
func newWalletExportTruthCmd() *cobra.Command {
	o := &walletTruthOptions{}
	cmd := &cobra.Command{
		Use:   "export-truth --datadir D [--out FILE]",
		Short: "Write the wallet's elements on chain as the truth file privacy analyze --truth reads",
		Long: "Write the filter element of every used address and script of the wallet (the wallet's\n" +
			"candidates on chain: unused lookahead addresses are in the filter but on no chain), one\n" +
			"per line in hex, with @HEIGHT, the height of its first confirmed payment (the intersection\n" +
			"attack requires an address only in the filters loaded from then on), and the address as a\n" +
			"comment. The file is an element file (privacy analyze --universe's format) whose first line\n" +
			"names the truth format and its version. It names the wallet's addresses: written with\n" +
			"permission 0600, whole or not at all; without --out it goes to standard output.",
		Args: cobra.NoArgs,
		RunE: o.run,
	}
	registerDatadir(cmd.Flags(), &o.datadir)
	cmd.Flags().StringVar(&o.out, "out", "", "truth file to write (default: standard output)")
	return cmd
}

// run implements `wallet export-truth`.
func (o *walletTruthOptions) run(cmd *cobra.Command, _ []string) (err error) {
	const prefix = "wallet export-truth"
	w, done, err := openSource(cmd.Context(), prefix, o.datadir)
	if err != nil {
		return err
	}
	defer done(&err)
	info, err := w.Truth(cmd.Context())
	if err != nil {
		return fmt.Errorf("%s: %w", prefix, err)
	}
	counts, synced := info.Counts, info.SyncedToHeight
	cands, notes, dated := truthCandidates(info.Elements)
	watched := counts.Derived + counts.Imported
	header := []string{
		fmt.Sprintf("wallet %s (%s, synced to height %d): %d used of %d watched addresses and scripts, %d with a first-seen height",
			o.datadir, info.Network, synced, len(cands), watched, dated),
		"each line: the filter element (hex) of a used address, @ the height of its first confirmed payment, # the address",
		"read by: bloomwatch privacy analyze --truth FILE",
	}
	var b bytes.Buffer
	if err := element.WriteTruthFile(&b, header, cands, notes); err != nil {
		return fmt.Errorf("%s: %w", prefix, err)
	}
	if o.out == "" {
		_, err = cmd.OutOrStdout().Write(b.Bytes())
		return err
	}
	// It names the wallet's addresses: only its owner reads it.
	if err := atomicfile.Write(o.out, b.Bytes(), outputFileMode); err != nil {
		return fmt.Errorf("%s: %w", prefix, err)
	}
	_, err = fmt.Fprintf(cmd.OutOrStdout(), "%s: %d elements of used addresses (of %d watched; %d with a first-seen height), for privacy analyze --truth\n",
		o.out, len(cands), watched, dated)
	return err
}

// truthCandidates turns the wallet's truth into element-file candidates
// with the address of each as its note, and counts those with a height.
func truthCandidates(truth []wallet.TruthElement) ([]element.Candidate, []string, int) {
	cands := make([]element.Candidate, 0, len(truth))
	notes := make([]string, 0, len(truth))
	dated := 0
	for _, e := range truth {
		c := element.Candidate{Forms: [][]byte{e.Element}}
		if e.FirstHeight > 0 {
			c.FirstSeen = e.FirstHeight
			dated++
		}
		cands = append(cands, c)
		notes = append(notes, e.Address)
	}
	return cands, notes, dated
}
