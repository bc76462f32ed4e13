package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/bloomwatch/bloomwatch/privacy"
	"github.com/bloomwatch/bloomwatch/privacy/element"
	"github.com/bloomwatch/bloomwatch/transcript"
)

// splitBIP158 separates the compact-filter records (those of the
// transcript and all of --bip158-transcript's) from the BIP37 ones.
func (o *privacyAnalyzeOptions) splitBIP158(records []transcript.Record) (bip37, cf []transcript.Record, err error) {
	for _, r := range records {
		if r.Kind.BIP158() {
			cf = append(cf, r)
		} else {
			bip37 = append(bip37, r)
		}
	}
	if o.bip158 != "" {
		more, err := readTranscriptFile(o.bip158)
		if err != nil {
			return nil, nil, err
		}
		n := len(cf)
		for _, r := range more {
			if r.Kind.BIP158() {
				cf = append(cf, r)
			}
		}
		if len(cf) == n {
			return nil, nil, usagef("--bip158-transcript %s: no compact-filter record (getcfilters, getblock)", o.bip158)
		}
	}
	return bip37, cf, nil
}

// runBIP158Only analyzes a transcript of a BIP158 sync alone: its block
// requests over the chain read with --btcd-rpc.
func (o *privacyAnalyzeOptions) runBIP158Only(cmd *cobra.Command, cf []transcript.Record) error {
	if o.rpc == "" {
		return usagef("privacy analyze: the transcript holds BIP158 requests only: their leak needs the chain (--btcd-rpc)")
	}
	var truth []element.Candidate
	if o.truth != "" {
		var err error
		if truth, err = readElementFile("--truth", o.truth); err != nil {
			return err
		}
	}
	chain, err := dialChain(o.rpc, o.rpcUser, o.rpcPass, o.height)
	if err != nil {
		return err
	}
	defer chain.Close()
	rep, err := privacy.AnalyzeBlockRequests(cmd.Context(), cf, chain, truth, o.height)
	if err != nil {
		return fmt.Errorf("privacy analyze: bip158: %w", err)
	}
	if o.asJSON {
		return writeJSON(cmd, struct {
			BIP158 *privacy.BlockRequestReport `json:"bip158"`
		}{rep})
	}
	return rep.WriteTable(cmd.OutOrStdout(), nil)
}
